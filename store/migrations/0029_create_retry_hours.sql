-- Per project, service, hour and route: retry_summary.sql's counts (runs, retries, failed attempts and the tokens
-- they took, failed attempts per retry cause), written with the other aggregates (analysis/aggregates.py), so the
-- retries of a window with whole aggregated hours add counts instead of reading every attempt. Exact.
-- Versions as scheduler_minutes: reads keep each hour's version recorded in aggregated_hours.
CREATE TABLE IF NOT EXISTS retry_hours
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    route String,
    runs UInt64,
    known_runs UInt64,
    successful_runs UInt64,
    runs_with_retries UInt64,
    extra_attempts Int64,
    attempts UInt64,
    failed_attempts UInt64,
    wasted_input_tokens UInt64,
    wasted_output_tokens UInt64,
    causes Tuple(Array(String), Array(UInt64)),
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, service, hour, route)
