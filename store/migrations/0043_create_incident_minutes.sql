-- Per project, service and minute: incident detection's series row (incident_series_slices.sql: attempts, errors,
-- exact p50/p95 and the count of known values of every bucket) of the whole service (dimension '', value '') and of
-- each of its routes, tenants and instances (dimension 'route', 'tenant' or 'instance', its value; named values
-- only), written with the other aggregates (analysis/aggregates.py). A minute lies inside one hour, so its row is
-- final once the hour is: the incidents step re-reads the same hours every minute, and reads their rows here instead
-- of every attempt, with the same answers. Every value of a dimension is kept (which slices a window judges depends
-- on the whole window). Versions as churn_minutes: reads keep each hour's version recorded in aggregated_hours.
CREATE TABLE IF NOT EXISTS incident_minutes
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    dimension LowCardinality(String),
    value String,
    minute DateTime('UTC'),
    attempts UInt64,
    errors UInt64,
    t_queue_q Array(Float64), t_queue_count UInt64,
    t_conn_q Array(Float64), t_conn_count UInt64,
    t_first_token_q Array(Float64), t_first_token_count UInt64,
    t_stream_q Array(Float64), t_stream_count UInt64,
    t_post_q Array(Float64), t_post_count UInt64,
    t_retry_q Array(Float64), t_retry_count UInt64,
    ttft_q Array(Float64), ttft_count UInt64,
    total_q Array(Float64), total_count UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, service, hour, dimension, value, minute)
