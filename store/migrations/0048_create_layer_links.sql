-- One row per pair of attempts of two services in one trace: a gateway's call (its attempt) and the engine's
-- attempt under it, with the cross-layer buckets (analysis/sql/materialize_layer_links.sql, docs/cross-layer.md).
-- Filled by analysis/materialize.py with request_buckets; a recompute writes the same keys anew
-- (ReplacingMergeTree on computed_at): read with FINAL. Keyed by the call's start, which never changes.
CREATE TABLE IF NOT EXISTS layer_links
(
    project_id UInt32,
    gateway_service LowCardinality(String),
    engine_service LowCardinality(String),
    engine_instance String,
    trace_id String,
    call_span_id String,
    engine_span_id String,
    server_span_id String,
    call_start_at DateTime64(9, 'UTC'),
    call_queued_at DateTime64(9, 'UTC'),
    call_ttft_ms Nullable(Float64),
    call_total_ms Nullable(Float64),
    engine_ttft_ms Nullable(Float64),
    engine_total_ms Nullable(Float64),
    t_gateway_ms Nullable(Float64),
    t_network_ttft_ms Nullable(Float64),
    t_network_total_ms Nullable(Float64),
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMMDD(call_start_at)
ORDER BY (project_id, gateway_service, toStartOfHour(call_start_at), trace_id, call_span_id, engine_span_id)
