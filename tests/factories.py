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
    if isinstance(value, (list, tuple)):  # array_value (nested lists and dicts too)
        return KeyValue(key=key, value=AnyValue(array_value={"values": [kv("", v).value for v in value]}))
    if isinstance(value, dict):  # kvlist_value
        return KeyValue(key=key, value=AnyValue(kvlist_value={"values": [kv(k, v) for k, v in value.items()]}))
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


def incident(project, service="llm-gateway", start=None, minutes=20, open_=False, verdict="queue_backlog", **fields):
    """A stored analysis.models.Incident with realistic JSON (a queue backlog: t_queue p95 33 s vs 40 ms, TTFT
    33.3 s vs 250 ms), as detection and explain would store it; `fields` override any column."""
    from datetime import timedelta

    from analysis.models import Incident

    start = start or BASE
    end = None if open_ else start + timedelta(minutes=minutes)
    peak_at = (start + timedelta(minutes=min(5, minutes - 1))).strftime("%Y-%m-%dT%H:%M:%SZ")
    stages = {"t_queue": 40.0, "t_conn": 5.0, "t_first_token": 210.0, "t_stream": 900.0, "t_post": 15.0, "t_retry": None}
    baseline = {"start": (start - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "end": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "buckets": {b: {"p50": None if v is None else v / 2, "p95": v} for b, v in stages.items()},
                "ttft": {"p50": 200.0, "p95": 250.0}, "total": {"p50": 1100.0, "p95": 1200.0}}
    peak = {"buckets": {b: {"p95": (33000.0 if b == "t_queue" else v), "at": peak_at if v is not None else None}
                        for b, v in stages.items()},
            "ttft": {"p95": 33300.0, "at": peak_at}, "total": {"p95": 34200.0, "at": peak_at}}
    path = [{"node": "queue_p95", "question": "Is queue wait high (t_queue p95, ms)?", "value": 33000.0,
             "threshold": 1000.0, "answer": "yes", "unit": "ms", "text": "t_queue p95 33 s is above 1 s → yes",
             "absolute_answer": "yes", "baseline_value": 40.0, "baseline_answer": "no", "change": "×825",
             "comparison": "t_queue p95 33 s vs baseline 40 ms: ×825"},
            {"node": "idle_slots", "question": "Under backlog, do slots sit idle (gap_fraction)?", "value": 0.02,
             "threshold": 0.5, "answer": "no", "unit": "%", "text": "gap_fraction 2% is below 50% → no",
             "absolute_answer": "no", "baseline_value": None, "baseline_answer": "unknown", "change": "",
             "comparison": "gap_fraction 2% vs baseline not measured"}]
    detail = {"departed": ["t_queue", "ttft", "total"], "baseline_source": "previous_day", "baseline_minutes": 60,
              "findings": [{"code": "queue_backlog", "kind": "cause", "message": "t_queue p95 33 s vs baseline 40 ms"}],
              "recommendations": [{"text": "Add capacity or shed load", "why": "slots were full", "source": "seed 000"}],
              "explained_at": start.strftime("%Y-%m-%dT%H:%M:%SZ")}
    values = {"project": project, "service": service, "start": start, "end": end, "verdict": verdict,
              "causes": [{"code": verdict, "share": 0.82}, {"code": "network_overhead", "share": 0.11}],
              "scope": [], "baseline": baseline, "peak": peak, "path": path, "detail": detail, **fields}
    return Incident.objects.create(**values)
