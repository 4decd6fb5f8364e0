"""gather() and beside() (store/concurrent.py): reads side by side on clients of their own, results in order, errors
raised, none left running behind their caller."""
import threading

import pytest

from store import client
from store.concurrent import beside, gather
from store.errors import ClickHouseError


def _read(n):
    """A real read, and the thread and client role that ran it."""
    [(value,)] = client.query_rows("SELECT {n:UInt32} * 2 FROM numbers(1) WHERE sleepEachRow(0.2) = 0", parameters={"n": n})
    return value, threading.get_ident(), client.reader_role()


def test_reads_run_side_by_side_on_their_own_clients(clickhouse, settings):
    settings.CLICKHOUSE_READ_THREADS = 3
    out = gather(*[lambda n=n: _read(n) for n in range(3)])
    assert [value for value, _, _ in out] == [0, 2, 4]  # in the calls' order
    assert len({thread for _, thread, _ in out}) == 3 and threading.get_ident() not in {t for _, t, _ in out}
    assert len({role for _, _, role in out}) == 3 and all(role.startswith("read-") for _, _, role in out)
    assert client.reader_role() == "default"  # the caller's own reads are untouched


def test_one_thread_or_a_nested_gather_runs_in_the_callers_thread(clickhouse, settings):
    settings.CLICKHOUSE_READ_THREADS = 1
    assert {thread for _, thread, _ in gather(lambda: _read(1), lambda: _read(2))} == {threading.get_ident()}
    settings.CLICKHOUSE_READ_THREADS = 2
    inner = gather(lambda: gather(lambda: _read(1), lambda: _read(2)), lambda: _read(3))[0]
    assert len({thread for _, thread, _ in inner}) == 1  # inside a pool thread: one after the other, no deadlock


def test_the_first_error_is_raised_after_every_call_ended(clickhouse, settings):
    settings.CLICKHOUSE_READ_THREADS = 3
    done = []
    with pytest.raises(ClickHouseError) as failed:
        gather(lambda: client.query_rows("SELECT no_such_column"), lambda: done.append(_read(5)))
    assert failed.value.reason == "query_failed" and done[0][0] == 10


def test_beside_reads_while_the_block_runs_and_the_block_waits_for_it(clickhouse, settings):
    settings.CLICKHOUSE_READ_THREADS = 2
    with beside(lambda: _read(4)) as read:
        mine = _read(1)  # the caller's own read, meanwhile
        value, thread, role = read.result()
    assert (value, mine[0]) == (8, 2) and thread != threading.get_ident() and role.startswith("read-")
    ended = []
    with pytest.raises(ZeroDivisionError), beside(lambda: ended.append(_read(3))):
        1 / 0  # the block fails at once: its end still waits for the read
    assert ended[0][0] == 6


def test_beside_runs_in_place_on_one_thread_and_raises_where_the_result_is_taken(clickhouse, settings):
    settings.CLICKHOUSE_READ_THREADS = 1
    with beside(lambda: _read(2)) as read:
        assert read.done() and read.result()[1] == threading.get_ident()
    with beside(lambda: client.query_rows("SELECT no_such_column")) as failed:
        with pytest.raises(ClickHouseError):
            failed.result()
