"""ClickHouse rows a fixture writes (ingest, then materialize), built once per worker and copied back for each later
test that asks for them: the dashboard's traffic took 2 s a test to ingest and materialize (two projects), its copy
takes a few milliseconds a table.

The rows are copied as stored (every table the test fixture empties), the project ids mapped to the new test's
projects (the Django DB rolls back between tests, so each test has projects of its own). ingested_hours is left to
its materialized view, which the copy of spans fills as an INSERT does.
"""
from collections.abc import Callable, Sequence
from typing import Any

from store import client
from store.tables import emptied_by_tests

DATABASE = "test_snapshots"
FILLED_BY_VIEW = {"ingested_hours"}
_built: dict[str, tuple[tuple[int, ...], Any]] = {}  # name -> the project ids its rows were built with, build()'s value
_filled: dict[str, tuple[str, ...]] = {}  # name -> the tables its snapshot has rows in (the only ones copied back)


def once(name: str, projects: Sequence, build: Callable[[], Any]) -> Any:
    """Run build() (it writes rows of `projects` only) the first time `name` is asked for in this worker and keep
    the store as it is then (a fixture's rows under it included); after, empty the store and copy those rows back
    with the project ids of `projects`, in the same order. Returns build()'s value (kept: it must not hold the
    projects themselves)."""
    ids = tuple(p.pk for p in projects)
    if name in _built:
        old, value = _built[name]
        _restore(name, old, ids)
        return value
    value = build()
    _snapshot(name)
    _built[name] = ids, value
    return value


def _snapshot(name: str) -> None:
    client.command(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    for table in _tables():
        copy = f"{DATABASE}.{name}__{table}"
        client.command(f"DROP TABLE IF EXISTS {copy}")
        client.command(f"CREATE TABLE {copy} AS {table}")
        client.command(f"INSERT INTO {copy} SELECT * FROM {table}")
    # an INSERT ... SELECT of an empty table still costs a statement (~6 ms in chDB) for nothing: _restore copies back
    # only the tables with rows (a snapshot of test_aggregates leaves 7 of 23 empty; the files that restore, 99 tests
    # with -n0: 66-68 s before, 63-64 s after, the same machine alternating)
    copies = {table for (table,) in client.query_rows(
        "SELECT DISTINCT table FROM system.parts WHERE database = {db:String} AND active AND rows > 0", {"db": DATABASE})}
    _filled[name] = tuple(table for table in _tables() if f"{name}__{table}" in copies)


def empty_store() -> None:
    """Empty every table a test starts without rows in (store/tables.py), truncating only those that hold rows: a
    TRUNCATE of an empty table still costs a statement (~1-2 ms in chDB, 21 tables before each of ~1,000 tests), and
    most tests leave most tables empty; one read of system.parts tells which."""
    tables = set(emptied_by_tests())
    for (table,) in client.query_rows(
            "SELECT DISTINCT table FROM system.parts WHERE database = currentDatabase() AND active"):
        if table in tables:
            client.command(f"TRUNCATE TABLE IF EXISTS {table}")


def _restore(name: str, old: tuple[int, ...], new: tuple[int, ...]) -> None:
    empty_store()
    for table in _filled[name]:
        column = "ProjectId" if table.startswith("otel_metrics") else "project_id"
        mapped = "multiIf(" + ", ".join(f"{column} = {a}, {b}" for a, b in zip(old, new)) + f", {column})"
        client.command(f"INSERT INTO {table} SELECT * REPLACE ({mapped} AS {column}) "
                       f"FROM {DATABASE}.{name}__{table}")


def _tables() -> list[str]:
    return [table for table in emptied_by_tests() if table not in FILLED_BY_VIEW]
