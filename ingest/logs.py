"""OTLP logs in: authorize -> read (gunzip) -> decode -> validate record by record -> spool (fsync).

The promise of traces and metrics: a 2xx is sent only once the request's valid records are fsynced in the logs
spool (INGEST_SPOOL_DIR/logs), and its writer (ingest.writer, kind LOGS) stores every batch exactly once in
otel_logs. Nothing reads them yet: they are kept so that exporters sending logs (OpenLIT, the SDKs' GenAI
events) get the OTLP answer instead of a 404.
"""
import json
import math
from collections import Counter

from django.conf import settings
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest, ExportLogsServiceResponse
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from ingest.decode import (ZERO_SPAN, ZERO_TRACE, Decoded, _hex_id, _parse_into, _replace_lone_surrogates,
                           accepted_window, read_body)
from ingest.errors import IngestError
from ingest.metrics import spool_request
from ingest.writer import LOGS, ProcessWriter, Writer
from projects.keys import authorize
from store.reasons import Reason

# Log records count against the project's spans-per-second limit as data points do (ingest.metrics.POINTS_PER_SPAN),
# at their own rate: a record (200-byte body, 5 attributes) took 0.47-0.75 of a span's INSERT time in chDB (20k rows
# of each, 4 rounds), so two records count as one span.
LOG_RECORDS_PER_SPAN = 2

_logs = ProcessWriter(LOGS, "logs")


def get_writer() -> Writer:
    """The process's logs writer (spool INGEST_SPOOL_DIR/logs), its thread started on first use."""
    return _logs.get()


def stop_writer(drain: bool = True) -> None:
    _logs.stop(drain=drain)


def export(authorization: str | None, raw: bytes, encoding: str, content_encoding: str = "") -> Decoded:
    """Store a request's valid log records durably; raises KeyError_, IngestError, OverLimit or SpoolFull.

    The key is checked before anything of the body is inflated or parsed, as for traces."""
    key = authorize(authorization, "ingest")
    body = read_body(raw, content_encoding, settings.INGEST_MAX_BODY_BYTES, settings.INGEST_MAX_INFLATE_SECONDS)
    if not body:
        return Decoded(body=b"", accepted=0)
    request, rejected, warnings = parse_json(body) if encoding == "json" else (parse_protobuf(body), Counter(), [])
    decoded = validated(request)
    decoded.rejected.update(rejected)
    decoded.warnings[:0] = warnings
    return spool_request(get_writer(), key.project_id, decoded, LOG_RECORDS_PER_SPAN)


def parse_protobuf(body: bytes) -> ExportLogsServiceRequest:
    try:
        return ExportLogsServiceRequest.FromString(body)
    except Exception:  # noqa: BLE001 -- upb raises DecodeError, and has raised SystemError on fuzzed bodies
        raise IngestError(Reason.MALFORMED_PROTOBUF, "body is not a valid ExportLogsServiceRequest "
                          "(truncated or corrupt protobuf, or strings that are not UTF-8)") from None


def parse_json(body: bytes) -> tuple[ExportLogsServiceRequest, Counter, list[str]]:
    """The request, the records that could not be read (reason -> count) and warnings.

    OTLP/JSON ids are hex, which json_format would read as base64: each record is parsed as traces' spans are
    (ingest.decode), its ids converted apart, so one bad record is rejected and the others kept."""
    text = body.decode("utf-8", errors="replace")
    text, lone = _replace_lone_surrogates(text)
    warnings = [f"{lone} lone UTF-16 surrogate escape(s) were replaced with U+FFFD"] if lone else []
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise IngestError(Reason.MALFORMED_JSON, f"body is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceLogs", []), list):
        raise IngestError(Reason.MALFORMED_JSON, "body must be an object whose resourceLogs is a list")
    request, rejected = ExportLogsServiceRequest(), Counter()
    for rl in doc.get("resourceLogs", []):
        if isinstance(rl, dict):
            _parse_resource_logs(rl, request, rejected)
    return request, rejected, warnings


def _parse_resource_logs(rl: dict, request: ExportLogsServiceRequest, rejected: Counter) -> None:
    scope_logs = rl.get("scopeLogs", [])
    if not isinstance(scope_logs, list):
        return  # holds no records we could count or keep
    target = request.resource_logs.add()
    if not _parse_into(rl.get("resource", {}), target.resource):
        rejected["invalid_resource"] += sum(len(_records_of(sl) or []) for sl in scope_logs)
        del request.resource_logs[-1]
        return
    target.schema_url = rl["schemaUrl"] if isinstance(rl.get("schemaUrl"), str) else ""
    for sl in scope_logs:
        records = _records_of(sl)
        scope_target = target.scope_logs.add()
        if records is None or not _parse_into(sl.get("scope", {}), scope_target.scope):
            rejected["invalid_scope"] += len(records or [])
            del target.scope_logs[-1]
            continue
        scope_target.schema_url = sl["schemaUrl"] if isinstance(sl.get("schemaUrl"), str) else ""
        for record in records:
            reason = _parse_record(record, scope_target.log_records)
            if reason:
                rejected[reason] += 1


def _records_of(sl) -> list | None:
    records = sl.get("logRecords", []) if isinstance(sl, dict) else None
    return records if isinstance(records, list) else None


_ID_FIELDS = {"traceId": ("invalid_trace_id", 16), "spanId": ("invalid_span_id", 8)}


def _parse_record(doc, records) -> str | None:
    """Append doc as a LogRecord to `records`; the reason code when it cannot be read. Ids are optional."""
    if not isinstance(doc, dict):
        return "invalid_log_record"
    doc, ids = dict(doc), {}
    for key, (reason, size) in _ID_FIELDS.items():
        raw = _hex_id(doc.pop(key, ""))
        if raw is None or len(raw) not in (0, size):
            return reason
        ids[key] = raw
    record = LogRecord()
    if not _parse_into(doc, record):
        return "invalid_log_record"
    record.trace_id, record.span_id = ids["traceId"], ids["spanId"]
    records.append(record)
    return None


def validated(request: ExportLogsServiceRequest) -> Decoded:
    """Drop the records that cannot be stored (with a reason each), render bodies, re-encode the rest."""
    rejected, accepted = Counter(), 0
    window = accepted_window()
    for rl in request.resource_logs:
        for sl in rl.scope_logs:
            bad = []
            for i, record in enumerate(sl.log_records):
                reason = record_problem(record, window)
                if reason:
                    rejected[reason] += 1
                    bad.append(i)
                else:
                    _normalize(record)
            for i in reversed(bad):
                del sl.log_records[i]
            accepted += len(sl.log_records)
    # TRICKY: unknown fields are dropped, as for spans: a known field sent with another wire type would make
    # ClickHouse refuse the whole batch.
    request.DiscardUnknownFields()
    return Decoded(body=request.SerializeToString(), accepted=accepted, rejected=rejected)


def record_problem(record: LogRecord, window: tuple[int, int]) -> str | None:
    """Why a log record cannot be stored, or None. Its time is time_unix_nano, else (0) observed_time_unix_nano."""
    if len(record.trace_id) not in (0, 16):
        return "invalid_trace_id"
    if len(record.span_id) not in (0, 8):
        return "invalid_span_id"
    if not window[0] <= (record.time_unix_nano or record.observed_time_unix_nano) <= window[1]:
        return "time_out_of_range"  # both 0 (unset) included: the retention would drop it at once
    return None


def _normalize(record: LogRecord) -> None:
    """All-zero ids mean none (stored ''); a body that is not a string is rendered as JSON text, at any depth."""
    if record.trace_id == ZERO_TRACE:
        record.trace_id = b""
    if record.span_id == ZERO_SPAN:
        record.span_id = b""
    kind = record.body.WhichOneof("value")
    if kind not in (None, "string_value"):
        record.body.string_value = json.dumps(_plain(record.body), ensure_ascii=False, separators=(",", ":"))


def _plain(value):
    """An AnyValue as a JSON-ready value: bytes as lower-case hex (as attribute values), NaN and infinities null."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_plain(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _plain(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    if kind == "double_value" and not math.isfinite(value.double_value):
        return None
    return getattr(value, kind) if kind else None


def response(decoded: Decoded) -> ExportLogsServiceResponse:
    out = ExportLogsServiceResponse()
    message = decoded.message().replace("span(s)", "log record(s)")
    if decoded.rejected_count or message:
        out.partial_success.rejected_log_records = decoded.rejected_count
        out.partial_success.error_message = message
    return out


