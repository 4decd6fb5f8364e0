"""Every ClickHouse table of the store and what the code must know of it, in one list.

Read by the retention (store/migrate.py: a table with `expires_by` gets a TTL of CLICKHOUSE_RETENTION_DAYS from that
column), the aggregates (analysis/rollups/aggregates.py: the tables an hour's aggregation fills, in chains run side by side,
each chain's tables in order) and the test fixture that empties the store between tests. tests/store/test_tables.py
checks the list against schema.sql, so a table added by a migration and missing here fails the suite.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    name: str
    expires_by: str | None  # the instant its rows expire from; None: kept (bookkeeping of the migrations)
    fill: str = ""  # the analysis/sql statement that aggregates an hour into it ("" for tables filled otherwise)
    chain: int = 0  # aggregate tables of one chain are filled in order (a later one reads an earlier one)


TABLES = (
    Table("spans", "start_at"),
    Table("request_buckets", "start_at"),
    Table("materialized_hours", "hour"),
    Table("ingested_hours", "hour"),  # filled by ingested_hours_view on every INSERT into spans
    Table("layer_links", "call_start_at"),
    Table("otel_metrics_gauge", "TimeUnix"),
    Table("otel_metrics_sum", "TimeUnix"),
    Table("otel_metrics_histogram", "TimeUnix"),
    Table("otel_metrics_exponential_histogram", "TimeUnix"),
    Table("otel_logs", "TimestampTime"),
    # the hourly aggregates (analysis/rollups/aggregates.py), and the mark of the hours aggregated
    Table("scheduler_minutes", "hour", "aggregate_scheduler_minutes", 1),
    Table("request_hours", "hour", "aggregate_request_hours", 2),
    Table("bucket_minutes", "hour", "aggregate_bucket_minutes", 3),
    Table("overview_five_minutes", "hour", "aggregate_overview_five_minutes", 3),  # reads bucket_minutes
    Table("bucket_hours", "hour", "aggregate_bucket_hours", 3),
    Table("tenant_hours", "hour", "aggregate_tenant_hours", 4),
    Table("tenant_service_hours", "hour", "aggregate_tenant_service_hours", 4),  # reads tenant_hours
    Table("coverage_hours", "hour", "aggregate_coverage_hours", 5),
    Table("share_hours", "hour", "aggregate_share_hours", 6),
    Table("segment_hours", "hour", "aggregate_segment_hours", 7),
    Table("retry_hours", "hour", "aggregate_retry_hours", 8),
    Table("churn_minutes", "hour", "aggregate_churn_minutes", 9),
    Table("incident_minutes", "hour", "aggregate_incident_minutes", 10),
    Table("aggregated_hours", "hour"),
    Table("schema_migrations", None),
)
VIEWS = ("attempts", "scheduler_pieces", "ingested_hours_view")
BY_NAME = {t.name: t for t in TABLES}


def retained() -> dict[str, str]:
    """{table: the column its rows expire from}."""
    return {t.name: t.expires_by for t in TABLES if t.expires_by}


def chains() -> tuple[tuple[str, ...], ...]:
    """The aggregate statements as chains: each chain's in order, the chains independent of each other."""
    found: dict[int, list[str]] = {}
    for t in TABLES:
        if t.fill:
            found.setdefault(t.chain, []).append(t.fill)
    return tuple(tuple(found[c]) for c in sorted(found))


def emptied_by_tests() -> tuple[str, ...]:
    """The tables a test starts without rows in: every table of data (the migrations' bookkeeping stays)."""
    return tuple(t.name for t in TABLES if t.name != "schema_migrations")
