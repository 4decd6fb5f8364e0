"""Reads stop after CLICKHOUSE_QUERY_TIMEOUT_SECONDS (ClickHouse max_execution_time); commands run to the end.

A real heavy query against chDB: ClickHouse itself stops it and its code 159 surfaces on ClickHouseError.
"""
import time

import pytest

from store.client import TIMEOUT_EXCEEDED, ClickHouseError

# ~30 s of hashing on one thread on the fastest machine seen (0.3 s a billion), far past these tests' 1 s timeout.
# TRICKY: not a plain sum(number): ClickHouse sums a billion numbers in 0.1 s there, so ten billion ended right at
# the timeout and a read sometimes returned its result instead of being stopped
HEAVY = "SELECT sum(cityHash64(number)) FROM numbers(100000000000) SETTINGS max_threads = 1"


@pytest.fixture
def one_second(settings, clickhouse_schema):
    from store import client

    settings.CLICKHOUSE_QUERY_TIMEOUT_SECONDS = 1
    return client


def test_heavy_read_is_stopped_with_timeout_exceeded(one_second):
    began = time.monotonic()
    for read in (one_second.query, one_second.query_rows, one_second.query_columns):
        with pytest.raises(ClickHouseError) as caught:
            read(HEAVY)
        assert (caught.value.code, caught.value.reason) == (TIMEOUT_EXCEEDED, "query_failed")
        assert "TIMEOUT_EXCEEDED" in str(caught.value)
    assert time.monotonic() - began < 12  # three reads of ~1 s each, not ~30 s of hashing each


def test_commands_are_not_limited(one_second):
    # the writer's INSERTs, migrations and materializing go through command(): they run past the read timeout
    assert one_second.command("SELECT sleep(1.5)") == 0
    with pytest.raises(ClickHouseError) as caught:
        one_second.query_rows("SELECT sleep(1.5)")
    assert caught.value.code == TIMEOUT_EXCEEDED


def test_zero_means_no_limit_and_a_caller_may_set_its_own(one_second, settings):
    assert one_second.query_rows("SELECT sleep(1.5)", settings={"max_execution_time": 0}) == [(0,)]
    settings.CLICKHOUSE_QUERY_TIMEOUT_SECONDS = 0
    assert one_second.query_rows("SELECT sleep(1.5)") == [(0,)]


def test_query_columns_gives_each_column_in_row_order_and_nothing_for_no_rows(clickhouse_schema):
    from store import client

    sql = "SELECT number AS n, toString(number * 2) AS s FROM numbers({k:UInt32}) ORDER BY n"
    assert client.query_columns(sql, parameters={"k": 3}) == {"n": [0, 1, 2], "s": ["0", "2", "4"]}
    assert client.query_columns(sql, parameters={"k": 0}) == {}
