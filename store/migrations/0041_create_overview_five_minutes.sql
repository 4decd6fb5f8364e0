-- Per project, service and five minutes, every route together: the Overview series' columns of bucket_minutes
-- (attempts, errors, DDSketch states and counts of TTFT and total over successful attempts), merged from its
-- rows when an hour is aggregated (analysis/aggregates.py). A series of a long window without a route filter
-- (buckets of 5 minutes or more: 15 minutes over a day) merges 288 rows a day instead of 1,440 per route: one
-- service's day, 10M-span bench data, 219 ms to read from bucket_minutes. The same states merged, so the same
-- quantiles. Versions as scheduler_minutes: reads keep each hour's version recorded in aggregated_hours.
CREATE TABLE IF NOT EXISTS overview_five_minutes
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    five_minutes DateTime('UTC'),
    attempts UInt64,
    errors UInt64,
    ttft_ok_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    ttft_ok_count UInt64,
    total_ok_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    total_ok_count UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, service, hour, five_minutes)
SETTINGS index_granularity_bytes = 1048576
