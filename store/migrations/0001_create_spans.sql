-- Every received span, one logical row per (project, trace, span): ReplacingMergeTree keeps the
-- latest copy when an exporter re-sends a batch; read with FINAL (the attempts view does).
-- Instants are those the span itself gives (native events or a foreign form, see ingest/mapping.py);
-- buckets that need other spans (t_conn, t_retry, SGLang queue) are joined in the attempts view.
CREATE TABLE IF NOT EXISTS spans
(
    project_id UInt32,
    trace_id String,
    span_id String,
    parent_span_id String,
    run_id String,
    role LowCardinality(String),
    form LowCardinality(String),
    name String,
    kind LowCardinality(String),
    service LowCardinality(String),
    instance String,
    tenant String,
    route String,
    model LowCardinality(String),
    stage LowCardinality(String),
    status LowCardinality(String),
    status_message String,
    attempt UInt16,
    retry_cause LowCardinality(String),
    connection_reused Nullable(Bool),
    cap Nullable(UInt32),
    input_tokens Nullable(UInt32),
    output_tokens Nullable(UInt32),
    start_at DateTime64(9, 'UTC'),
    end_at DateTime64(9, 'UTC'),
    duration_ms Float64,
    queued_at Nullable(DateTime64(9, 'UTC')),
    admitted_at Nullable(DateTime64(9, 'UTC')),
    first_token_at Nullable(DateTime64(9, 'UTC')),
    last_token_at Nullable(DateTime64(9, 'UTC')),
    released_at Nullable(DateTime64(9, 'UTC')),
    lifecycle_ordered Bool,
    event_names Array(String),
    event_times Array(DateTime64(9, 'UTC')),
    span_attributes Map(String, String),
    resource_attributes Map(String, String),
    scope_name String,
    ingested_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMMDD(start_at)
ORDER BY (project_id, service, toStartOfHour(start_at), trace_id, span_id)
SETTINGS non_replicated_deduplication_window = 1000
