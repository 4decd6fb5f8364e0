"""gather() (store/concurrent.py): reads side by side on clients of their own, results in order, errors raised."""
import threading

import pytest

from store import client
from store.concurrent import gather
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
