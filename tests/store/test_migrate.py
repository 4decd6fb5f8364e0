"""ClickHouse migrations: numbered without gaps, applied once, frozen once applied; retention as TTL."""
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from store.migrate import MIGRATIONS_DIR, MigrationError, apply_retention, load_migrations, migrate, pending


def _write(directory, *names):
    for name in names:
        (directory / name).write_text("SELECT 1")
    return directory


def test_migrations_are_numbered_from_one_without_gaps():
    migrations = load_migrations()
    assert [m.version for m in migrations] == list(range(1, len(migrations) + 1))
    assert (migrations[0].name, migrations[1].name) == ("create_spans", "create_attempts_view")
    assert len(list(MIGRATIONS_DIR.glob("*.sql"))) == len(migrations)  # no file left out


@pytest.mark.parametrize("names", [
    ("0001_a.sql", "0003_c.sql"),  # a gap
    ("0001_a.sql", "0001_b.sql"),  # a repeat
    ("0002_b.sql",),  # not starting at 1
    ("0001_a.sql", "2_b.sql"),  # a badly named file
])
def test_load_migrations_refuses_gaps_repeats_and_bad_names(tmp_path, names):
    with pytest.raises(MigrationError):
        load_migrations(_write(tmp_path, *names))


def test_migrate_twice_applies_nothing_the_second_time(clickhouse):
    assert migrate() == []
    assert pending() == []
    rows = clickhouse.query_rows("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
    # one row per migration, recorded with the checksum of its text
    assert rows == [(m.version, m.name, m.checksum) for m in load_migrations()]
    out = StringIO()
    call_command("migrate_clickhouse", "--check", stdout=out)
    assert out.getvalue().strip() == "ClickHouse schema is up to date"


def _set_checksum(clickhouse, version: int, checksum: str) -> None:
    clickhouse.command(
        "ALTER TABLE schema_migrations UPDATE checksum = {c:String} WHERE version = {v:UInt32}",
        parameters={"c": checksum, "v": version}, settings={"mutations_sync": 2},
    )


def test_an_applied_migration_whose_text_changed_fails_loudly(clickhouse):
    # what an edited 0001 looks like from here: the recorded checksum no longer matches the file
    real = load_migrations()[0].checksum
    _set_checksum(clickhouse, 1, "x")
    try:
        with pytest.raises(MigrationError, match="0001_create_spans was edited after it was applied"):
            pending()
        with pytest.raises(MigrationError):
            migrate()
        with pytest.raises(CommandError, match="checksum differs"):
            call_command("migrate_clickhouse", stdout=StringIO())
    finally:
        _set_checksum(clickhouse, 1, real)
    assert pending() == []


def _ttl(clickhouse) -> str:
    [(query,)] = clickhouse.query_rows(
        "SELECT create_table_query FROM system.tables WHERE database = currentDatabase() AND name = 'spans'")
    return query


def test_apply_retention_changes_the_ttl_of_spans(clickhouse):
    assert f"toIntervalDay({settings.CLICKHOUSE_RETENTION_DAYS})" in _ttl(clickhouse)
    try:
        apply_retention(7)
        assert "toIntervalDay(7)" in _ttl(clickhouse)
        assert f"toIntervalDay({settings.CLICKHOUSE_RETENTION_DAYS})" not in _ttl(clickhouse)
    finally:
        apply_retention(settings.CLICKHOUSE_RETENTION_DAYS)
    assert f"toIntervalDay({settings.CLICKHOUSE_RETENTION_DAYS})" in _ttl(clickhouse)


def test_every_table_of_timed_rows_expires_with_the_retention(clickhouse):
    """A table added without a RETAINED entry would keep its rows forever (three aggregate tables once did)."""
    rows = clickhouse.query_rows(
        "SELECT name, create_table_query FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree'")
    timed = {name for name, query in rows if any(f"`{column}` DateTime" in query for column in ("hour", "start_at", "TimeUnix"))}
    assert timed >= {"spans", "request_buckets", "tenant_service_hours", "segment_hours", "retry_hours"}
    for name, query in rows:
        if name in timed:
            assert f"toIntervalDay({settings.CLICKHOUSE_RETENTION_DAYS})" in query, f"{name} has no retention TTL"
