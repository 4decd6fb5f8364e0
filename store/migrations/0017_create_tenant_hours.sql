-- Per project, service, hour, route and tenant: attempts and the tails' DDSketches (total, TTFT, t_queue; relative
-- accuracy 0.002) with their counts, written with the other aggregates (analysis/aggregates.py), so the tenant tails
-- of a long window merge one row per tenant and hour instead of reading every attempt.
-- Versions as scheduler_minutes: reads keep each hour's version recorded in aggregated_hours.
CREATE TABLE IF NOT EXISTS tenant_hours
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
    route String,
    tenant String,
    attempts UInt64,
    total_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    total_count UInt64,
    ttft_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    ttft_count UInt64,
    t_queue_dd AggregateFunction(quantilesDD(0.002, 0.5, 0.95, 0.99), Nullable(Float64)),
    t_queue_count UInt64,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, service, hour, route, tenant)
