"""Log records -> rows of otel_logs, as ClickHouse SQL over spooled OTLP protobuf.

The same approach as metrics (ingest/metrics_mapping.py): ClickHouse decodes the spooled ExportLogsServiceRequests
itself and one INSERT ... SELECT unnests resource -> scope -> log record. The resource and scope columns and the
attribute maps are the metrics' expressions (values rendered by ingest.mapping). The body arrives as a string:
ingest.logs rendered any other AnyValue as JSON before spooling. Values (limits, the file path) travel as query
parameters.
"""
from functools import lru_cache

from ingest.mapping import _KV, _kv_map
from ingest.metrics_mapping import _COMMON

STRUCTURE = (
    f"project_id UInt32, resource_logs Array(Tuple(resource Tuple(attributes {_KV}), schema_url String, "
    f"scope_logs Array(Tuple(scope Tuple(name String, version String, attributes {_KV}), schema_url String, "
    "log_records Array(Tuple(time_unix_nano UInt64, observed_time_unix_nano UInt64, severity_number Int32, "
    f"severity_text String, body Tuple(string_value String), attributes {_KV}, flags UInt32, trace_id String, "
    "span_id String, event_name String))))))"
)

_SHARED = ("ResourceAttributes", "ResourceSchemaUrl", "ScopeName", "ScopeVersion", "ScopeAttributes", "ScopeSchemaUrl",
           "ServiceName")
COLUMNS = {
    "project_id": "project_id",
    # OTLP: time_unix_nano 0 means unknown; the collector's observed time stands in (ingest.logs checked one is set)
    "Timestamp": "fromUnixTimestamp64Nano(toInt64(if(r.time_unix_nano != 0, r.time_unix_nano, "
                 "r.observed_time_unix_nano)), 'UTC')",
    "TraceId": "lower(hex(r.trace_id))",
    "SpanId": "lower(hex(r.span_id))",
    "TraceFlags": "toUInt8(bitAnd(r.flags, 255))",
    "SeverityText": "leftUTF8(toValidUTF8(r.severity_text), 64)",
    "SeverityNumber": "toUInt8(if(r.severity_number BETWEEN 0 AND 24, r.severity_number, 0))",
    "Body": "toValidUTF8(r.body.string_value)",
    **{name: _COMMON[name] for name in _SHARED},
    "LogAttributes": _kv_map("r.attributes"),
    "EventName": "leftUTF8(toValidUTF8(r.event_name), 256)",
    # the store's clock, as spans.ingested_at: the minute job finds the hours that got GenAI events by it
    "ingested_at": "now64(3, 'UTC')",
}


def statements(source: str) -> list[tuple[str, str, str]]:
    """(token suffix, INSERT sql, structure): one INSERT, into otel_logs, for ingest.writer."""
    return [("", insert_sql(source), STRUCTURE)]


@lru_cache(maxsize=4)
def insert_sql(source: str) -> str:
    """INSERT INTO otel_logs ... SELECT over `source` (a file() or input() table function, see ingest.inserts)."""
    resource = _kv_map("rm.resource.attributes")
    return f"""INSERT INTO otel_logs ({', '.join(COLUMNS)})
SELECT {', '.join(f'{expr} AS {name}' for name, expr in COLUMNS.items())}
FROM
(
    SELECT project_id, rm, sm, r, {resource} AS ra
    FROM {source}
    ARRAY JOIN resource_logs AS rm
    ARRAY JOIN rm.scope_logs AS sm
    ARRAY JOIN sm.log_records AS r
)"""
