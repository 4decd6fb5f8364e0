"""OTLP request bodies -> validated ExportTraceServiceRequest bytes, span by span.

Steps: read_body (size and gzip limits) -> decode_protobuf / decode_json -> validate each span.
Invalid spans are dropped with a reason and counted for OTLP partial_success; the valid spans of
the same request go on. What is left is re-encoded (unknown fields dropped) for the spool.
"""
import binascii
import json
import math
import re
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from ingest.errors import IngestError
from ingest.otlp_proto import LenientRequest
from store.reasons import Reason

ZERO_TRACE, ZERO_SPAN = b"\0" * 16, b"\0" * 8
INFLATE_CHUNK_BYTES = 1024 * 1024  # gunzip output per step; the time limit is checked between steps


@dataclass
class Decoded:
    """What a request contributes: protobuf bytes of its valid spans and what was dropped or changed."""

    body: bytes
    accepted: int
    rejected: Counter = field(default_factory=Counter)  # reason -> spans
    warnings: list[str] = field(default_factory=list)
    folded: Counter = field(default_factory=Counter)  # dimension -> spans stored as __other__ (ingest.cardinality)

    @property
    def rejected_count(self) -> int:
        return sum(self.rejected.values())

    def message(self) -> str:
        parts = [f"{n} span(s) rejected: {reason}" for reason, n in sorted(self.rejected.items())]
        return "; ".join(parts + self.warnings)


def read_body(raw: bytes, content_encoding: str, max_bytes: int, max_seconds: float | None = None,
              clock=time.monotonic) -> bytes:
    """The request body, gunzipped when sent with Content-Encoding: gzip.

    413 body_too_large past max_bytes (before or after gunzip) or when inflating takes longer than
    max_seconds (None: no time limit); 400 for a bad or unsupported encoding.
    """
    if len(raw) > max_bytes:
        raise IngestError(Reason.BODY_TOO_LARGE, f"request body exceeds {max_bytes} bytes")
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding != "gzip":
        raise IngestError(Reason.UNSUPPORTED_ENCODING, f"Content-Encoding {encoding!r} is not supported (use gzip)")
    return _gunzip(raw, max_bytes, math.inf if max_seconds is None else max_seconds, clock)


def _gunzip(raw: bytes, max_bytes: int, max_seconds: float, clock) -> bytes:
    """raw inflated INFLATE_CHUNK_BYTES at a time, so that neither memory nor time runs away.

    TRICKY: max_length bounds each call's output, so a gzip bomb stops at the limit instead of filling
    memory; between chunks the clock is read, so a body that inflates slowly stops at the deadline.
    """
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    chunks, size, data, deadline = [], 0, raw, clock() + max_seconds
    while not inflater.eof:
        if clock() > deadline:
            raise IngestError(Reason.BODY_TOO_LARGE, f"decompressing the body took over {max_seconds:g} s")
        try:
            chunk = inflater.decompress(data, INFLATE_CHUNK_BYTES)
        except zlib.error as exc:
            raise IngestError(Reason.MALFORMED_GZIP, f"body is not valid gzip: {exc}") from None
        size += len(chunk)
        if size > max_bytes:
            raise IngestError(Reason.BODY_TOO_LARGE, f"decompressed body exceeds {max_bytes} bytes")
        chunks.append(chunk)
        data = inflater.unconsumed_tail
        if not data and len(chunk) < INFLATE_CHUNK_BYTES:
            break  # all input used and nothing held back: the end, or a truncated body
    if not inflater.eof:
        raise IngestError(Reason.MALFORMED_GZIP, "gzip body is truncated")
    return b"".join(chunks)


def decode_protobuf(body: bytes, max_attributes: int, fold=None) -> Decoded:
    """The valid spans of a protobuf body; `fold(request, serialized)` may rewrite the valid spans (then they
    are re-encoded) and returns (spans folded per dimension, warnings), as ingest.cardinality.fold does."""
    warnings = []
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except DecodeError:
        # Strict parsing fails on bad UTF-8 as on real corruption; tell them apart by a bytes-typed parse.
        request = _parse_protobuf(LenientRequest, body)
        warnings.append("some strings were not valid UTF-8; invalid bytes were replaced with U+FFFD")
    except Exception:  # noqa: BLE001 -- see _parse_protobuf
        raise _malformed_protobuf() from None
    decoded = _validated(request, max_attributes, fold)
    decoded.warnings[:0] = warnings
    return decoded


def _integer(digits: str) -> int | float:
    """A JSON integer; one of more than 4,000 digits as +-inf.

    TRICKY: int() refuses more than 4,300 digits (ValueError), which json.loads would turn into a
    malformed_json for the whole body; as +-inf the number is out of range wherever an integer is
    expected, so only its span is rejected (and in an unknown field it is ignored).
    """
    return int(digits) if len(digits) <= 4000 else float(digits)


def _parse_protobuf(cls, body: bytes):
    """cls parsed from body, or IngestError(Reason.MALFORMED_PROTOBUF).

    TRICKY: besides DecodeError, the upb parser has raised SystemError on a fuzzed body (an internal error
    it failed to translate). Whatever it raises, a body it cannot parse is the client's fault: a 400.
    """
    try:
        return cls.FromString(body)
    except Exception:  # noqa: BLE001
        raise _malformed_protobuf() from None


def _malformed_protobuf() -> IngestError:
    message = "body is not a valid ExportTraceServiceRequest (truncated or corrupt protobuf)"
    return IngestError(Reason.MALFORMED_PROTOBUF, message)


def decode_json(body: bytes, max_attributes: int, fold=None) -> Decoded:
    """The valid spans of an OTLP/JSON body, re-encoded as protobuf; `fold` as for decode_protobuf."""
    warnings = []
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", errors="replace")
        warnings.append("body was not valid UTF-8; invalid bytes were replaced with U+FFFD")
    text, lone = _replace_lone_surrogates(text)
    if lone:
        warnings.append(f"{lone} lone UTF-16 surrogate escape(s) (\\ud800-\\udfff) in strings "
                        "were replaced with U+FFFD")
    try:
        doc = json.loads(text, parse_int=_integer)
    except (ValueError, RecursionError) as exc:
        raise IngestError(Reason.MALFORMED_JSON, f"body is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans", []), list):
        raise IngestError(Reason.MALFORMED_JSON, "body must be an object whose resourceSpans is a list")
    request, rejected = _request_from_json(doc["resourceSpans"] if "resourceSpans" in doc else [])
    decoded = _validated(request, max_attributes, fold)
    decoded.rejected.update(rejected)
    decoded.warnings[:0] = warnings
    return decoded


def _validated(request, max_attributes: int, fold=None) -> Decoded:
    """Drop invalid spans, let `fold` rewrite the valid ones; re-encode what is left."""
    accepted, rejected, truncated = validate(request, accepted_window(), max_attributes)
    body = reencode(request)
    folded, fold_warnings = fold(request, body) if fold and accepted else (Counter(), [])
    if folded:
        body = request.SerializeToString()
    decoded = Decoded(body=body, accepted=accepted, rejected=rejected, folded=folded)
    if truncated:
        decoded.warnings.append(f"{truncated} span(s) had more than {max_attributes} attributes; the rest were not stored")
    decoded.warnings += fold_warnings
    return decoded


def validate(request, window: tuple[int, int], max_attributes: int) -> tuple[int, Counter, int]:
    """Remove the invalid spans from `request` (span_problem against `window`); returns (spans accepted,
    spans rejected per reason, accepted spans with more than max_attributes attributes)."""
    rejected, accepted, truncated = Counter(), 0, 0
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            bad = []
            for i, span in enumerate(ss.spans):
                reason = span_problem(span, window)
                if reason:
                    rejected[reason] += 1
                    bad.append(i)
                else:
                    accepted += 1
                    truncated += len(span.attributes) > max_attributes
            for i in reversed(bad):
                del ss.spans[i]
    return accepted, rejected, truncated


def reencode(request) -> bytes:
    """`request` without unknown fields, serialized: the bytes the spool takes.

    TRICKY: the client's bytes are never passed on as they are: a known field sent with another wire
    type is an unknown field to Python but makes ClickHouse refuse the whole batch, so unknown fields
    are discarded and the request re-encoded (upb does it at ~1M spans/s).
    """
    request.DiscardUnknownFields()
    return request.SerializeToString()


def accepted_window(now_ns: int | None = None) -> tuple[int, int]:
    """[oldest, newest] start/end time in ns the store keeps: the retention back, the allowed clock skew ahead.

    TRICKY: a span outside it must be refused here, never spooled: its retention would drop it at once,
    and a request spread over more days than ClickHouse takes partitions in one INSERT (100) fails every
    INSERT of its batch.
    """
    now_ns = time.time_ns() if now_ns is None else now_ns
    oldest = now_ns - settings.CLICKHOUSE_RETENTION_DAYS * 86_400 * 10**9
    return oldest, now_ns + settings.INGEST_MAX_FUTURE_SKEW_SECONDS * 10**9


def span_problem(span, window: tuple[int, int] | None = None) -> str | None:
    """The reason code a span is rejected for, or None when it is valid (times checked against `window`)."""
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
    if window and not (window[0] <= span.start_time_unix_nano and span.end_time_unix_nano <= window[1]):
        return "timestamp_out_of_range"
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
        schema_url = rs.get("schemaUrl")
        target.schema_url = schema_url if isinstance(schema_url, str) else ""  # metadata: a wrong type is dropped
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
    except (json_format.ParseError, ValueError, TypeError, OverflowError, RecursionError):
        # OverflowError: an enum or integer sent as 1e400 / Infinity; RecursionError: AnyValue nested too deep
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
    status = doc.get("status")
    if _enum_out_of_range(doc.get("kind")) or (isinstance(status, dict) and _enum_out_of_range(status.get("code"))):
        return "invalid_span"
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


# in JSON text; of the surrogate escapes, only whole pairs are kept (see _replace_lone_surrogates)
_SURROGATE_ESCAPE = re.compile(
    r"\\\\"  # an escaped backslash
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?"  # a high surrogate, maybe with its low half
    r"|\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # a low surrogate alone
)


def _replace_lone_surrogates(text: str) -> tuple[str, int]:
    """text with each lone surrogate escape (\\ud800 without its low half, a lone \\udc00) made \\ufffd; how many.

    TRICKY: json.loads turns such an escape into a str that cannot be encoded as UTF-8, and protobuf then
    fails to store it (UnicodeEncodeError). A high + low pair is one character (an emoji) and stays. The
    escaped backslash is matched only so that "\\\\ud800" (a backslash, then the letters ud800) is skipped.
    """
    if "\\u" not in text:
        return text, 0
    lone = 0

    def fix(match: re.Match) -> str:
        nonlocal lone
        escape = match.group()
        if escape == "\\\\" or len(escape) == 12:
            return escape
        lone += 1
        return "\\ufffd"

    return _SURROGATE_ESCAPE.sub(fix, text), lone


_INT32 = range(-(2**31), 2**31)
_INTEGER_TEXT = re.compile(r"\s*[+-]?\d+\s*")


def _enum_out_of_range(value) -> bool:
    """An enum sent as a number outside int32 (1e400, Infinity, 2**40, "99999999999").

    TRICKY: json_format refuses most of these, but passes some on to upb, which wraps them around
    (2**32 + 2 is stored as 2, SPAN_KIND_SERVER) instead of refusing them. Names and NaN are left to
    json_format, which ignores an unknown one.
    """
    if isinstance(value, str):
        return bool(_INTEGER_TEXT.fullmatch(value)) and (len(value) > 20 or int(value) not in _INT32)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
        return math.isinf(value) or int(value) not in _INT32
    return False


def _hex_id(value) -> bytes | None:
    """OTLP/JSON ids are case-insensitive hex; None when not a hex string."""
    if not isinstance(value, str):
        return None
    try:
        return binascii.unhexlify(value)
    except (binascii.Error, ValueError):
        return None


__all__ = ["Decoded", "IngestError", "read_body", "decode_protobuf", "decode_json", "span_problem", "validate",
           "reencode"]
