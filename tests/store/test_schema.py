"""schema.sql is what the migrations build: regenerate it with `migrate_clickhouse --dump-schema`."""
from store.migrate import SCHEMA_FILE, dump_schema


def test_schema_sql_matches_a_freshly_migrated_store(clickhouse):
    assert dump_schema() == SCHEMA_FILE.read_text(), "run: python manage.py migrate_clickhouse --dump-schema"
