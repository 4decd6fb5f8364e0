"""Metric data points -> rows of the otel_metrics_* tables, as ClickHouse SQL over spooled OTLP protobuf.

The same approach as spans (ingest/mapping.py): ClickHouse decodes the spooled ExportMetricsServiceRequests
itself and one INSERT ... SELECT per table unnests resource -> scope -> metric -> data point. A metric's
data lives in one branch of a oneof (gauge, sum, histogram, exponential_histogram); the other branches read
as empty arrays, so each INSERT takes exactly the points of its kind. Summaries are not stored (decode
counts them as rejected with a reason). Values (limits, the file path) travel as query parameters.
"""
from functools import lru_cache

from ingest.mapping import _KV, _kv_map

_POINT = f"attributes {_KV}, start_time_unix_nano UInt64, time_unix_nano UInt64, flags UInt32"
_NUMBER = f"Tuple({_POINT}, as_double Float64, as_int Int64, value Enum8('none' = 0, 'as_double' = 4, 'as_int' = 6))"
_HISTOGRAM = (f"Tuple({_POINT}, count UInt64, sum Float64, bucket_counts Array(UInt64), explicit_bounds Array(Float64), "
              "min Float64, max Float64)")
_BUCKETS = "Tuple(offset Int32, bucket_counts Array(UInt64))"
_EXPONENTIAL = (f"Tuple({_POINT}, count UInt64, sum Float64, scale Int32, zero_count UInt64, positive {_BUCKETS}, "
                f"negative {_BUCKETS}, min Float64, max Float64)")
_BRANCHES = {
    "gauge": f"gauge Tuple(data_points Array({_NUMBER}))",
    "sum": f"sum Tuple(data_points Array({_NUMBER}), aggregation_temporality Int32, is_monotonic Bool)",
    "histogram": f"histogram Tuple(data_points Array({_HISTOGRAM}), aggregation_temporality Int32)",
    "exponential_histogram": f"exponential_histogram Tuple(data_points Array({_EXPONENTIAL}), aggregation_temporality Int32)",
}


def structure(branch: str) -> str:
    """What ClickHouse reads of a SpoolRecord for one table: the metric's other branches are skipped unparsed, so
    each of the four INSERTs decodes only its own kind of points."""
    return (
        f"project_id UInt32, resource_metrics Array(Tuple(resource Tuple(attributes {_KV}), schema_url String, "
        f"scope_metrics Array(Tuple(scope Tuple(name String, version String, attributes {_KV}, "
        f"dropped_attributes_count UInt32), schema_url String, metrics Array(Tuple(name String, description String, "
        f"unit String, {_BRANCHES[branch]}))))))"
    )


_COMMON = {
    "ProjectId": "project_id",
    "ResourceAttributes": "ra",
    "ResourceSchemaUrl": "leftUTF8(toValidUTF8(rm.schema_url), 512)",
    "ScopeName": "leftUTF8(toValidUTF8(sm.scope.name), 256)",
    "ScopeVersion": "leftUTF8(toValidUTF8(sm.scope.version), 128)",
    "ScopeAttributes": _kv_map("sm.scope.attributes"),
    "ScopeDroppedAttrCount": "sm.scope.dropped_attributes_count",
    "ScopeSchemaUrl": "leftUTF8(toValidUTF8(sm.schema_url), 512)",
    "ServiceName": "if(ra['service.name'] != '', ra['service.name'], 'unknown_service')",
    "MetricName": "leftUTF8(toValidUTF8(m.name), 256)",
    "MetricDescription": "leftUTF8(toValidUTF8(m.description), 1024)",
    "MetricUnit": "leftUTF8(toValidUTF8(m.unit), 64)",
    "Attributes": _kv_map("p.attributes"),
    "StartTimeUnix": "fromUnixTimestamp64Nano(toInt64(p.start_time_unix_nano), 'UTC')",
    "TimeUnix": "fromUnixTimestamp64Nano(toInt64(p.time_unix_nano), 'UTC')",
    "Flags": "p.flags",
}
_VALUE = {"Value": "if(p.value = 'as_int', toFloat64(p.as_int), p.as_double)"}
_HISTOGRAM_COLUMNS = {"Count": "p.count", "Sum": "p.sum", "Min": "p.min", "Max": "p.max"}
# table -> (the metric's branch, the columns of that table beyond the common ones)
TABLES = {
    "otel_metrics_gauge": ("gauge", _VALUE),
    "otel_metrics_sum": ("sum", {**_VALUE, "AggregationTemporality": "m.sum.aggregation_temporality",
                                 "IsMonotonic": "m.sum.is_monotonic"}),
    "otel_metrics_histogram": ("histogram", {
        **_HISTOGRAM_COLUMNS, "BucketCounts": "p.bucket_counts", "ExplicitBounds": "p.explicit_bounds",
        "AggregationTemporality": "m.histogram.aggregation_temporality"}),
    "otel_metrics_exponential_histogram": ("exponential_histogram", {
        **_HISTOGRAM_COLUMNS, "Scale": "p.scale", "ZeroCount": "p.zero_count", "PositiveOffset": "p.positive.offset",
        "PositiveBucketCounts": "p.positive.bucket_counts", "NegativeOffset": "p.negative.offset",
        "NegativeBucketCounts": "p.negative.bucket_counts",
        "AggregationTemporality": "m.exponential_histogram.aggregation_temporality"}),
}


def statements(source: str) -> list[tuple[str, str, str]]:
    """(token suffix, INSERT sql, structure) per table, for ingest.writer."""
    return [(f"-{table}", insert_sql(table, source), structure(branch)) for table, (branch, _) in TABLES.items()]


@lru_cache(maxsize=8)
def insert_sql(table: str, source: str) -> str:
    """INSERT INTO `table` ... SELECT over `source` (a file() or input() table function, see ingest.writer)."""
    branch, extra = TABLES[table]
    columns = {**_COMMON, **extra}
    resource = _kv_map("rm.resource.attributes")
    return f"""INSERT INTO {table} ({', '.join(columns)})
SELECT {', '.join(f'{expr} AS {name}' for name, expr in columns.items())}
FROM
(
    SELECT project_id, rm, sm, m, p, {resource} AS ra
    FROM {source}
    ARRAY JOIN resource_metrics AS rm
    ARRAY JOIN rm.scope_metrics AS sm
    ARRAY JOIN sm.metrics AS m
    ARRAY JOIN m.{branch}.data_points AS p
)"""
