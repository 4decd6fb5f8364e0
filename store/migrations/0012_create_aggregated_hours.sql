-- One row per (project, hour) each time analysis/aggregates.py recomputes that hour's scheduler_minutes and
-- request_hours: which hours have aggregates at all (a window with an hour missing is read from request_buckets,
-- as before), and which version of their rows is current (the latest computed_at).
CREATE TABLE IF NOT EXISTS aggregated_hours
(
    project_id UInt32,
    hour DateTime('UTC'),
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour)
