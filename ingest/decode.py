"""OTLP request bodies -> validated ExportTraceServiceRequest bytes, span by span.

Steps: read_body (size and gzip limits) -> decode_protobuf / decode_json -> validate each span.
Invalid spans are dropped with a reason and counted for OTLP partial_success; the valid spans of
the same request go on. What is left is re-encoded (unknown fields dropped) for the spool.
"""
import binascii
import json
import zlib
from collections import Counter
from dataclasses import dataclass, field

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from ingest.errors import IngestError
from ingest.otlp_proto import LenientRequest

ZERO_TRACE, ZERO_SPAN = b"\0" * 16, b"\0" * 8


@dataclass
class Decoded:
    """What a request contributes: protobuf bytes of its valid spans and what was dropped or changed."""

    body: bytes
    accepted: int
    rejected: Counter = field(default_factory=Counter)  # reason -> spans
    warnings: list[str] = field(default_factory=list)

    @property
    def rejected_count(self) -> int:
        return sum(self.rejected.values())

    def message(self) -> str:
        parts = [f"{n} span(s) rejected: {reason}" for reason, n in sorted(self.rejected.items())]
        return "; ".join(parts + self.warnings)


def read_body(raw: bytes, content_encoding: str, max_bytes: int) -> bytes:
    """The request body, gunzipped when sent with Content-Encoding: gzip; 413 past max_bytes either way."""
    if len(raw) > max_bytes:
        raise IngestError("body_too_large", f"request body exceeds {max_bytes} bytes", status=413)
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding != "gzip":
        raise IngestError("unsupported_encoding", f"Content-Encoding {encoding!r} is not supported (use gzip)")
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        # TRICKY: max_length bounds the output, so a gzip bomb stops at the limit instead of filling memory.
        body = inflater.decompress(raw, max_bytes + 1)
    except zlib.error as exc:
        raise IngestError("malformed_gzip", f"body is not valid gzip: {exc}") from None
    if len(body) > max_bytes or inflater.unconsumed_tail:
        raise IngestError("body_too_large", f"decompressed body exceeds {max_bytes} bytes", status=413)
    if not inflater.eof:
        raise IngestError("malformed_gzip", "gzip body is truncated")
    return body


def decode_protobuf(body: bytes, max_attributes: int) -> Decoded:
    warnings = []
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except DecodeError:
        # Strict parsing fails on bad UTF-8 as on real corruption; tell them apart by a bytes-typed parse.
        try:
            request = LenientRequest.FromString(body)
        except DecodeError:
            raise IngestError(
                "malformed_protobuf", "body is not a valid ExportTraceServiceRequest (truncated or corrupt protobuf)"
            ) from None
        warnings.append("some strings were not valid UTF-8; invalid bytes were replaced with U+FFFD")
    decoded = _validated(request, max_attributes)
    decoded.warnings[:0] = warnings
    return decoded


def decode_json(body: bytes, max_attributes: int) -> Decoded:
    warnings = []
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", errors="replace")
        warnings.append("body was not valid UTF-8; invalid bytes were replaced with U+FFFD")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise IngestError("malformed_json", f"body is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans", []), list):
        raise IngestError("malformed_json", "body must be an object whose resourceSpans is a list")
    request, rejected = _request_from_json(doc["resourceSpans"] if "resourceSpans" in doc else [])
    decoded = _validated(request, max_attributes)
    decoded.rejected.update(rejected)
    decoded.warnings[:0] = warnings
    return decoded


def _validated(request, max_attributes: int) -> Decoded:
    """Drop invalid spans; re-encode what is left.

    TRICKY: the client's bytes are never passed on as they are: a known field sent with another wire
    type is an unknown field to Python but makes ClickHouse refuse the whole batch, so unknown fields
    are discarded and the request re-encoded (upb does it at ~1M spans/s).
    """
    rejected, accepted, truncated = Counter(), 0, 0
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            bad = []
            for i, span in enumerate(ss.spans):
                reason = span_problem(span)
                if reason:
                    rejected[reason] += 1
                    bad.append(i)
                else:
                    accepted += 1
                    truncated += len(span.attributes) > max_attributes
            for i in reversed(bad):
                del ss.spans[i]
    request.DiscardUnknownFields()
    body = request.SerializeToString()
    decoded = Decoded(body=body, accepted=accepted, rejected=rejected)
    if truncated:
        decoded.warnings.append(f"{truncated} span(s) had more than {max_attributes} attributes; the rest were not stored")
    return decoded


def span_problem(span) -> str | None:
    """The reason code a span is rejected for, or None when it is valid."""
    if len(span.trace_id) != 16 or span.trace_id == ZERO_TRACE:
        return "invalid_trace_id"
    if len(span.span_id) != 8 or span.span_id == ZERO_SPAN:
        return "invalid_span_id"
    if len(span.parent_span_id) not in (0, 8):
        return "invalid_parent_span_id"
    if span.start_time_unix_nano <= 0 or span.end_time_unix_nano <= 0:
        return "invalid_timestamp"
    if span.end_time_unix_nano < span.start_time_unix_nano:
        return "end_before_start"
    return None


# --- OTLP/JSON: hex ids, lowerCamelCase keys, int64 as strings; converted span by span -------------

_ID_FIELDS = {"traceId": ("invalid_trace_id", 16), "spanId": ("invalid_span_id", 8), "parentSpanId": ("invalid_parent_span_id", 8)}


def _request_from_json(resource_spans: list) -> tuple[ExportTraceServiceRequest, Counter]:
    request, rejected = ExportTraceServiceRequest(), Counter()
    for rs in resource_spans:
        if not isinstance(rs, dict):
            continue  # holds no spans we could count or keep
        scope_spans = rs.get("scopeSpans", [])
        target = request.resource_spans.add()
        if not isinstance(scope_spans, list) or not _parse_into(rs.get("resource", {}), target.resource):
            rejected["invalid_resource"] += _count_spans(scope_spans)
            del request.resource_spans[-1]
            continue
        target.schema_url = str(rs.get("schemaUrl", ""))
        for ss in scope_spans:
            spans = ss.get("spans", []) if isinstance(ss, dict) else None
            scope_target = target.scope_spans.add()
            if not isinstance(spans, list) or not _parse_into(ss.get("scope", {}), scope_target.scope):
                rejected["invalid_scope"] += len(spans) if isinstance(spans, list) else 0
                del target.scope_spans[-1]
                continue
            for span in spans:
                reason = _parse_span(span, scope_target.spans)
                if reason:
                    rejected[reason] += 1
    return request, rejected


def _count_spans(scope_spans) -> int:
    if not isinstance(scope_spans, list):
        return 0
    return sum(len(ss.get("spans", [])) for ss in scope_spans if isinstance(ss, dict) and isinstance(ss.get("spans"), list))


def _parse_into(doc, message) -> bool:
    if not isinstance(doc, dict):
        return False
    try:
        json_format.ParseDict(doc, message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError):
        return False
    return True


def _parse_span(doc, spans) -> str | None:
    """Append doc as a Span to `spans`; the reason code when it cannot be parsed."""
    if not isinstance(doc, dict):
        return "invalid_span"
    doc = dict(doc)
    ids = {}
    for key, (reason, size) in _ID_FIELDS.items():
        value = doc.pop(key, "")
        raw = _hex_id(value)
        if raw is None or (raw and len(raw) != size) or (not raw and key != "parentSpanId"):
            return reason
        ids[key] = raw
    if _negative_time(doc):
        return "invalid_timestamp"
    doc.pop("links", None)  # links are not stored; their hex ids would need the same conversion
    span = Span()
    if not _parse_into(doc, span):
        return "invalid_span"
    span.trace_id, span.span_id, span.parent_span_id = ids["traceId"], ids["spanId"], ids["parentSpanId"]
    spans.append(span)
    return None


def _negative_time(doc: dict) -> bool:
    """A span time sent as a negative integer, which fixed64 cannot hold (zero is caught by span_problem)."""
    for key in ("startTimeUnixNano", "endTimeUnixNano"):
        value = doc.get(key)
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            try:
                if int(value) < 0:
                    return True
            except ValueError:
                pass
    return False


def _hex_id(value) -> bytes | None:
    """OTLP/JSON ids are case-insensitive hex; None when not a hex string."""
    if not isinstance(value, str):
        return None
    try:
        return binascii.unhexlify(value)
    except (binascii.Error, ValueError):
        return None


__all__ = ["Decoded", "IngestError", "read_body", "decode_protobuf", "decode_json", "span_problem"]
