-- tenant_service_hours copied into granules of at most 1 MiB (index_granularity_bytes; the default 10 MiB held ~1,300
-- of its rows of ~8.5 KiB of DDSketch states each) as tenant_service_hours_swap, which the next migration swaps in. A
-- read of one service's hours deserialized the states of every row of the granules it touched, about three times
-- the rows it kept (the rows of one service and a day are a few hundred, contiguous in the sort key): the tenant
-- tails of one service over 24 h ending at :37 (10M-span bench data, one read at a time, best of 7)
-- 157-167 -> 112-114 ms.
-- index_granularity_bytes is read-only on a table, hence the copy, rows as they are (optimize_on_insert = 0 keeps
-- every version). Run it with the workers stopped, as docker/compose.yml's `migrate` does: the rows of an hour
-- aggregated during the copy would stay behind in the old table.
CREATE OR REPLACE TABLE tenant_service_hours_swap
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
SETTINGS index_granularity_bytes = 1048576
AS SELECT * FROM tenant_service_hours SETTINGS optimize_on_insert = 0
