-- Per-minute sketches of the buckets of each service and route (analysis/aggregates.py): for windows past
-- analysis.queries.SKETCH_AFTER the distributions, the Overview series and the incident series merge these states
-- for the window's whole hours instead of reading every attempt. A DDSketch (quantilesDD) with relative accuracy
-- 0.002: a quantile read from it is within 0.2 % of a value at that rank. Sums and counts are exact (means and
-- counts do not change); ttft_ok / total_ok are over successful attempts (the Overview's quantiles).
-- Versions as scheduler_minutes: reads keep each hour's version recorded in aggregated_hours.
CREATE TABLE IF NOT EXISTS bucket_minutes
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    route String,
    minute DateTime('UTC'),
    attempts UInt64,
    errors UInt64,
    t_queue_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_queue_sum Float64,
    t_queue_count UInt64,
    t_conn_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_conn_sum Float64,
    t_conn_count UInt64,
    t_first_token_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_first_token_sum Float64,
    t_first_token_count UInt64,
    t_stream_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_stream_sum Float64,
    t_stream_count UInt64,
    t_post_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_post_sum Float64,
    t_post_count UInt64,
    t_retry_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_retry_sum Float64,
    t_retry_count UInt64,
    ttft_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    ttft_sum Float64,
    ttft_count UInt64,
    total_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    total_sum Float64,
    total_count UInt64,
    ttft_ok_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    ttft_ok_count UInt64,
    total_ok_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    total_ok_count UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMMDD(hour)
ORDER BY (project_id, service, hour, route, minute)
