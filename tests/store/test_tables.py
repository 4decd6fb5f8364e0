"""store/tables.py is the one list of the store's tables: it names every table and view the migrations build, and
what it says of each (retention, aggregate chains) is what the store has."""
from django.conf import settings

from store import tables
from store.migrate import SCHEMA_FILE


def _schema_names() -> set[str]:
    return {line[3:].strip() for line in SCHEMA_FILE.read_text().splitlines() if line.startswith("-- ")}


def test_the_list_names_every_table_and_view_of_the_schema():
    assert set(tables.BY_NAME) | set(tables.VIEWS) == _schema_names()


def test_each_listed_expiry_is_a_ttl_of_the_migrated_table(clickhouse):
    rows = dict(clickhouse.query_rows(
        "SELECT name, create_table_query FROM system.tables WHERE database = currentDatabase()"))
    for table in tables.TABLES:
        ttl = f"TTL toDateTime({table.expires_by}) + toIntervalDay({settings.CLICKHOUSE_RETENTION_DAYS})"
        assert (ttl in rows[table.name]) == bool(table.expires_by), table.name


def test_the_aggregate_chains_fill_every_aggregate_table_once_from_its_own_statement():
    from analysis.rollups.aggregates import CHAINS

    statements = [s for chain in CHAINS for s in chain]
    assert len(statements) == len(set(statements)) == len([t for t in tables.TABLES if t.fill])
    assert all(s == f"aggregate_{t.name}" for t in tables.TABLES if t.fill for s in [t.fill])
    # a chain's later statement reads what its first wrote: bucket_minutes before overview_five_minutes
    assert ("aggregate_bucket_minutes", "aggregate_overview_five_minutes", "aggregate_bucket_hours") in CHAINS


def test_the_test_fixture_empties_every_table_of_data(clickhouse):
    for name in tables.emptied_by_tests():
        assert clickhouse.query_rows(f"SELECT count() FROM {name}") == [(0,)], name
