-- Engine and GPU metrics (issue 13), shaped like the OpenTelemetry Collector's ClickHouse exporter table of
-- the same name (DateTime64(9) instants), so a Collector can also be pointed at this database. Our additions:
-- ProjectId (a Collector's rows take it from the resource attribute latency_obs.project_id) and Instance, the
-- join key with traces (service.instance.id, else k8s.pod.name, else host.name). MergeTree with a
-- deduplication window: the writer's insert_deduplication_token makes a replayed batch store nothing twice.
-- TTL from CLICKHOUSE_RETENTION_DAYS (store/migrate.py RETAINED), not here.
CREATE TABLE IF NOT EXISTS otel_metrics_sum
(
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ResourceSchemaUrl String CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion String CODEC(ZSTD(1)),
    ScopeAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeDroppedAttrCount UInt32 CODEC(ZSTD(1)),
    ScopeSchemaUrl String CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    MetricName LowCardinality(String) CODEC(ZSTD(1)),
    MetricDescription String CODEC(ZSTD(1)),
    MetricUnit String CODEC(ZSTD(1)),
    Attributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    StartTimeUnix DateTime64(9) CODEC(Delta, ZSTD(1)),
    TimeUnix DateTime64(9) CODEC(Delta, ZSTD(1)),
    Value Float64 CODEC(ZSTD(1)),
    Flags UInt32 CODEC(ZSTD(1)),
    Exemplars Nested (
        FilteredAttributes Map(LowCardinality(String), String),
        TimeUnix DateTime64(9),
        Value Float64,
        SpanId String,
        TraceId String
    ) CODEC(ZSTD(1)),
    AggregationTemporality Int32 CODEC(ZSTD(1)),
    IsMonotonic Boolean CODEC(Delta, ZSTD(1)),
    ProjectId UInt32 DEFAULT toUInt32OrZero(ResourceAttributes['latency_obs.project_id']),
    Instance String MATERIALIZED multiIf(ResourceAttributes['service.instance.id'] != '', ResourceAttributes['service.instance.id'],
        ResourceAttributes['k8s.pod.name'] != '', ResourceAttributes['k8s.pod.name'], ResourceAttributes['host.name']),
    INDEX idx_attr_key mapKeys(Attributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_time_minmax TimeUnix TYPE minmax GRANULARITY 1
)
ENGINE = MergeTree
PARTITION BY toDate(TimeUnix)
ORDER BY (ProjectId, ServiceName, MetricName, toStartOfHour(TimeUnix), Instance, cityHash64(Attributes), TimeUnix)
SETTINGS non_replicated_deduplication_window = 1000, ttl_only_drop_parts = 1
