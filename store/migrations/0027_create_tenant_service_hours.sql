-- tenant_hours summed over routes (per project, service, hour and tenant; same sketches): a read without a route
-- filter, the diagnosis's, merges one row per tenant and hour instead of one per route too. Merging DDSketch states
-- is what such a read costs (37 tenants x 3 routes x 24 h: 170 ms, over routes: 75 ms). Versions as tenant_hours.
CREATE TABLE IF NOT EXISTS tenant_service_hours
(
    project_id UInt32,
    service LowCardinality(String),
    hour DateTime('UTC'),
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
ORDER BY (project_id, service, hour, tenant)
