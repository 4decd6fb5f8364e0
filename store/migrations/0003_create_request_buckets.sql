-- One row per attempt span with its buckets, instants and stage sums: what analysis reads instead of
-- the attempts view (whose FINAL and joins over every service take seconds per query).
-- Filled by analysis/materialize.py per (project, hour of queued_at); re-running an hour replaces its
-- rows (ReplacingMergeTree on computed_at), so read with FINAL.
-- TRICKY: the key uses the attempt's start_at, not queued_at: start_at never changes, while queued_at
-- moves when an SGLang prefill_waiting child arrives later; queries bound start_at to the window
-- +- 1 hour (as the attempts view does) so the primary key still prunes.
CREATE TABLE IF NOT EXISTS request_buckets
(
    project_id UInt32,
    service LowCardinality(String),
    instance String,
    tenant String,
    route String,
    model LowCardinality(String),
    run_id String,
    trace_id String,
    span_id String,
    attempt UInt16,
    status LowCardinality(String),
    retry_cause LowCardinality(String),
    connection_reused Nullable(Bool),
    cap Nullable(UInt32),
    input_tokens Nullable(UInt32),
    output_tokens Nullable(UInt32),
    start_at DateTime64(9, 'UTC'),
    queued_at DateTime64(9, 'UTC'),
    admitted_at Nullable(DateTime64(9, 'UTC')),
    first_token_at Nullable(DateTime64(9, 'UTC')),
    last_token_at Nullable(DateTime64(9, 'UTC')),
    released_at Nullable(DateTime64(9, 'UTC')),
    t_queue_ms Nullable(Float64),
    t_conn_ms Nullable(Float64),
    t_first_token_ms Nullable(Float64),
    t_stream_ms Nullable(Float64),
    t_post_ms Nullable(Float64),
    t_retry_ms Nullable(Float64),
    ttft_ms Nullable(Float64),
    total_ms Nullable(Float64),
    prep_ms Nullable(Float64),
    network_ms Nullable(Float64),
    retrieval_ms Nullable(Float64),
    tool_ms Nullable(Float64),
    post_stage_ms Nullable(Float64),
    is_final_attempt Bool,
    run_attempt_count UInt32,
    computed_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMMDD(start_at)
ORDER BY (project_id, service, toStartOfHour(start_at), trace_id, span_id)
