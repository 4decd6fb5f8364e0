-- Per project and hour, the newest ingested_at of its attempt and stage spans, the hours assigned as
-- analysis/sql/dirty_hours.sql assigns them. Filled by ingested_hours_view (0051) on every INSERT into spans: a few
-- rows per INSERT, merged to their max. analysis/sql/hour_freshness.sql, run before every page and API read of the
-- last hours, reads these rows instead of every span of those hours (at 5,000 spans/s, 18M spans an hour:
-- seconds of each page under ingest, `make bench-live`).
CREATE TABLE IF NOT EXISTS ingested_hours
(
    project_id UInt32,
    hour DateTime('UTC'),
    ingested_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour)
