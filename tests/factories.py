"""Builders for OTLP spans and whole LLM requests, with exact bucket timings.

Defaults are realistic, every call gets fresh ids, and a fixed base time replaces now(), so expected
numbers can be worked out by hand: `attempt(t_queue_ms=20, t_first_token_ms=300, ...)`.
"""
import base64
import itertools
import os
from datetime import datetime, timezone

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

BASE = datetime(2026, 1, 5, 10, 0, tzinfo=timezone.utc)
BASE_NS = int(BASE.timestamp()) * 1_000_000_000
MS = 1_000_000
_seq = itertools.count(1)


def new_trace_id() -> bytes:
    return os.urandom(16)


def new_span_id() -> bytes:
    return os.urandom(8)


def kv(key: str, value) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    if isinstance(value, bytes):
        return KeyValue(key=key, value=AnyValue(bytes_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def span(name="chat", start_ns=None, duration_ms=100.0, attributes=None, events=None, trace_id=None,
         parent=None, status_code=Status.STATUS_CODE_UNSET, kind=Span.SPAN_KIND_SERVER) -> Span:
    """A span; `events` maps event name -> offset from start in ms (or is a list of such pairs, for repeats)."""
    start_ns = BASE_NS + next(_seq) * 1000 * MS if start_ns is None else start_ns
    s = Span(
        trace_id=trace_id or new_trace_id(), span_id=new_span_id(), name=name, kind=kind,
        start_time_unix_nano=start_ns, end_time_unix_nano=start_ns + int(duration_ms * MS),
    )
    if parent is not None:
        s.parent_span_id = parent.span_id
    s.attributes.extend(kv(k, v) for k, v in (attributes or {}).items())
    pairs = events.items() if isinstance(events, dict) else (events or [])
    for event_name, offset_ms in pairs:
        s.events.add(name=event_name, time_unix_nano=start_ns + int(offset_ms * MS))
    s.status.code = status_code
    return s


def attempt(t_queue_ms=20.0, t_first_token_ms=300.0, t_stream_ms=900.0, t_post_ms=15.0, tenant="alice",
            route="/v1/chat/completions", model="llama-3.1-8b", reused=True, attributes=None, **kwargs) -> Span:
    """A native-form attempt span whose lifecycle events give exactly these buckets.

    tenant, route, model or reused set to None leave that attribute out (to test fallbacks).
    """
    queued = 0.0
    admitted = queued + t_queue_ms
    first = admitted + t_first_token_ms
    last = first + t_stream_ms
    released = last + t_post_ms
    attrs = {"tenant.id": tenant, "llm.route": route, "gen_ai.request.model": model,
             "gen_ai.usage.input_tokens": 800, "gen_ai.usage.output_tokens": 200, "llm.connection.reused": reused}
    attrs.update(attributes or {})
    attrs = {k: v for k, v in attrs.items() if v is not None}
    events = {"queued": queued, "admitted": admitted, "first_token": first, "last_token": last, "released": released}
    return span(duration_ms=released, attributes=attrs, events=events, **kwargs)


def stage(parent: Span, stage_name: str, offset_ms: float, duration_ms: float) -> Span:
    """A stage span (llm.stage) under `parent`, starting offset_ms after the parent's start."""
    return span(name=stage_name, start_ns=parent.start_time_unix_nano + int(offset_ms * MS), duration_ms=duration_ms,
                attributes={"llm.stage": stage_name}, trace_id=parent.trace_id, parent=parent, kind=Span.SPAN_KIND_INTERNAL)


def request(*spans: Span, service="llm-gateway", instance="gw-1", resource=None) -> ExportTraceServiceRequest:
    """An ExportTraceServiceRequest with one resource holding `spans`."""
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    attrs = {"service.name": service, "service.instance.id": instance}
    attrs.update(resource or {})
    rs.resource.attributes.extend(kv(k, v) for k, v in attrs.items())
    ss = rs.scope_spans.add()
    ss.scope.name = "tests"
    ss.spans.extend(spans)
    return req


def otlp_json(req: ExportTraceServiceRequest) -> dict:
    """The request as OTLP/JSON: camelCase keys, int64 as strings, enums as ints, ids as hex (not base64)."""
    doc = json_format.MessageToDict(req, use_integers_for_enums=True)
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = base64.b64decode(s[key]).hex()
    return doc


def json_spans(doc: dict) -> list[dict]:
    """The span dicts of an OTLP/JSON document, in order (to spoil one of them)."""
    return [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
