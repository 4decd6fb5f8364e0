-- Measurement coverage (analysis/sql/_coverage_counts.sql) per project, service, hour of queued_at, route and span
-- form, written with the other aggregates (analysis/aggregates.py) so the coverage of a long window sums hours.
-- Versions as scheduler_minutes: reads keep each hour's version recorded in aggregated_hours.
CREATE TABLE IF NOT EXISTS coverage_hours
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    route String,
    form LowCardinality(String),
    attempts UInt64,
    runs UInt64,
    successes UInt64,
    t_queue UInt64,
    t_conn UInt64,
    t_first_token UInt64,
    t_stream UInt64,
    t_post UInt64,
    t_retry UInt64,
    ttft UInt64,
    total UInt64,
    connections UInt64,
    cap UInt64,
    tokens UInt64,
    stages UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, service, hour, route, form)
