"""Applies migrations/NNNN_verb_object.sql in order, recording each in schema_migrations.

ClickHouse DDL is not transactional, so each file holds one statement: applied or not.
An applied migration whose text changed fails loudly: add a new migration instead.
"""
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from store import client, tables

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
SCHEMA_FILE = Path(__file__).parent / "schema.sql"
NAME_RE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
BOOTSTRAP = """CREATE TABLE IF NOT EXISTS schema_migrations
(version UInt32, name String, checksum String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3))
ENGINE = MergeTree ORDER BY version"""


class MigrationError(Exception):
    pass


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """The migration files in version order; numbers must run 1, 2, 3... without gaps or repeats."""
    found = []
    for path in sorted(directory.glob("*.sql")):
        match = NAME_RE.match(path.name)
        if not match:
            raise MigrationError(f"{path.name}: migration files are named NNNN_verb_object.sql")
        found.append(Migration(int(match[1]), match[2], path.read_text()))
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise MigrationError(f"migration numbers must run 1..N without gaps or repeats, got {versions}")
    return found


def applied() -> dict[int, tuple[str, str]]:
    client.command(BOOTSTRAP)
    rows = client.query_rows("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
    return {version: (name, checksum) for version, name, checksum in rows}


def pending() -> list[Migration]:
    """Migrations not applied yet; raises MigrationError if an applied one was edited."""
    done = applied()
    todo = []
    for migration in load_migrations():
        if migration.version not in done:
            todo.append(migration)
        elif done[migration.version][1] != migration.checksum:
            raise MigrationError(
                f"migration {migration.version:04d}_{migration.name} was edited after it was applied "
                f"(checksum differs); never edit an applied migration, add a new one"
            )
    return todo


def migrate() -> list[Migration]:
    """Apply pending migrations, then the configured retention; returns what was applied."""
    todo = pending()
    for migration in todo:
        client.command(migration.sql)
        client.command(
            "INSERT INTO schema_migrations (version, name, checksum) VALUES ({v:UInt32}, {n:String}, {c:String})",
            parameters={"v": migration.version, "n": migration.name, "c": migration.checksum},
        )
    apply_retention(settings.CLICKHOUSE_RETENTION_DAYS)
    return todo


# Tables that expire rows after CLICKHOUSE_RETENTION_DAYS, with the instant they expire from (store/tables.py).
RETAINED = tables.retained()


def apply_retention(days: int) -> None:
    """TTL on spans and request_buckets from CLICKHOUSE_RETENTION_DAYS (configuration, so not a frozen migration)."""
    for table, column in RETAINED.items():
        current = client.query_rows(
            "SELECT create_table_query FROM system.tables WHERE database = currentDatabase() AND name = {t:String}",
            parameters={"t": table})
        if not current or f"toIntervalDay({days})" in current[0][0]:
            continue
        # TRICKY: a TTL interval cannot be a query parameter; `days` is an int validated by settings, and
        # table and column are the literals above.
        client.command(
            f"ALTER TABLE {table} MODIFY TTL toDateTime({column}) + toIntervalDay({int(days)})",
            settings={"materialize_ttl_after_modify": 0},
        )


def dump_schema() -> str:
    """CREATE statements of every table and view, in name order: what schema.sql holds."""
    rows = client.query_rows(
        "SELECT name, replaceAll(create_table_query, currentDatabase() || '.', '') FROM system.tables "
        "WHERE database = currentDatabase() AND NOT is_temporary ORDER BY name"
    )
    # TRICKY: the TTL comes from CLICKHOUSE_RETENTION_DAYS, not from migrations; keep it out of the dump.
    return "".join(f"-- {name}\n{re.sub(r' TTL .*? SETTINGS', ' SETTINGS', sql)};\n\n" for name, sql in rows)
