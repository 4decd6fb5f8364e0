-- OTLP logs (POST /v1/logs, gRPC LogsService/Export), shaped like the OpenTelemetry Collector ClickHouse exporter's
-- otel_logs table (EventName included), so a Collector can also be pointed at this database. Our addition:
-- project_id, first in the key (a Collector's rows take it from the resource attribute latency_obs.project_id).
-- TraceId / SpanId are lower-case hex, '' when the record has none. MergeTree with a deduplication window: the
-- writer's insert_deduplication_token makes a replayed batch store nothing twice.
-- TTL from CLICKHOUSE_RETENTION_DAYS (store/migrate.py RETAINED), not here.
CREATE TABLE IF NOT EXISTS otel_logs
(
    project_id UInt32 DEFAULT toUInt32OrZero(ResourceAttributes['latency_obs.project_id']),
    Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TimestampTime DateTime DEFAULT toDateTime(Timestamp),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    TraceFlags UInt8,
    SeverityText LowCardinality(String) CODEC(ZSTD(1)),
    SeverityNumber UInt8,
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Body String CODEC(ZSTD(1)),
    ResourceSchemaUrl LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeSchemaUrl LowCardinality(String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion LowCardinality(String) CODEC(ZSTD(1)),
    ScopeAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    LogAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    EventName String CODEC(ZSTD(1)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_res_attr_key mapKeys(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_res_attr_value mapValues(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_log_attr_key mapKeys(LogAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_log_attr_value mapValues(LogAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_body Body TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8
)
ENGINE = MergeTree
PARTITION BY toDate(TimestampTime)
PRIMARY KEY (project_id, ServiceName, TimestampTime)
ORDER BY (project_id, ServiceName, TimestampTime, Timestamp)
SETTINGS non_replicated_deduplication_window = 1000, ttl_only_drop_parts = 1
