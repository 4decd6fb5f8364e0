"""The ingest benchmark's workload: native-form LLM attempt spans as serialized OTLP protobuf.

Each body is one ExportTraceServiceRequest from one service instance (one resource, one scope)
holding `batch` spans. Every span is a native-form attempt (docs/span-convention.md, tests/factories.py):
five lifecycle events (queued, admitted, first_token, last_token, released; `queued` carries one
attribute) and 15 span attributes (tenant.id, llm.route, gen_ai.request.model, gen_ai.usage.*,
llm.connection.reused, llm.scheduler.cap, ...), with seeded random, realistic timings.

Deterministic: the same (spans, batch, seed, anchor_ns) give the same bytes. Only the anchor moves
between runs: it is "about an hour ago", so every span starts within the last hour and survives the
spans table's TTL (CLICKHOUSE_RETENTION_DAYS, 30 days by default).
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.factories import kv  # noqa: E402  (the same OTLP attribute builder as the tests)

MS = 1_000_000
TENANTS = [f"tenant-{i:03d}" for i in range(40)]
ROUTES = ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/embeddings"]
MODELS = [("llama-3.1-8b-instruct", "vllm", 64), ("llama-3.1-70b-instruct", "vllm", 16),
          ("mistral-7b-instruct", "tgi", 48), ("qwen2.5-32b-instruct", "vllm", 24)]
# (service.name, service.instance.id): several gateways and one batch service
INSTANCES = [("llm-gateway", f"gw-{i}") for i in range(1, 7)] + [("batch-runner", f"batch-{i}") for i in (1, 2)]
SPREAD_NS = 50 * 60 * 1000 * MS  # the spans' start times cover 50 minutes, ending ~10 minutes ago


def default_anchor_ns() -> int:
    """Start of the workload's time range: one hour ago, rounded down to the minute."""
    now_s = int(time.time())
    return (now_s - now_s % 60 - 3600) * 1_000_000_000


def _attempt(rng: random.Random, start_ns: int, seq: int) -> Span:
    """One native-form attempt span starting at start_ns."""
    model, system, cap = rng.choice(MODELS)
    route = rng.choices(ROUTES, weights=(70, 10, 15, 5))[0]
    input_tokens = rng.randint(20, 4000)
    output_tokens = 1 if route == "/v1/embeddings" else rng.randint(1, 1200)
    retried = rng.random() < 0.04
    failed = rng.random() < 0.02
    # Lifecycle (ns): queue wait (mostly short, a heavy tail), prefill per input token, decode per token, teardown.
    queued = start_ns
    admitted = queued + int(rng.expovariate(1 / 30) * MS) + rng.randint(50_000, 2 * MS)
    first_token = admitted + input_tokens * rng.randint(60_000, 220_000)
    last_token = first_token + output_tokens * rng.randint(8 * MS, 35 * MS) // (8 if route == "/v1/embeddings" else 1)
    released = last_token + rng.randint(100_000, 15 * MS)
    span = Span(
        trace_id=rng.randbytes(16), span_id=rng.randbytes(8), parent_span_id=rng.randbytes(8),
        name=f"POST {route}", kind=Span.SPAN_KIND_SERVER, start_time_unix_nano=queued, end_time_unix_nano=released,
        attributes=[
            kv("tenant.id", rng.choice(TENANTS)),
            kv("llm.route", route),
            kv("gen_ai.system", system),
            kv("gen_ai.request.model", model),
            kv("gen_ai.usage.input_tokens", input_tokens),
            kv("gen_ai.usage.output_tokens", output_tokens),
            kv("gen_ai.request.max_tokens", rng.choice([256, 512, 1024, 2048])),
            kv("gen_ai.request.temperature", rng.choice([0.0, 0.2, 0.7, 1.0])),
            kv("llm.connection.reused", rng.random() < 0.85),
            kv("llm.scheduler.cap", cap),
            kv("llm.attempt", rng.randint(2, 3) if retried else 1),
            kv("llm.stream", route != "/v1/embeddings" and rng.random() < 0.7),
            kv("http.request.method", "POST"),
            kv("http.response.status_code", 503 if failed else 200),
            kv("request.id", f"req-{rng.getrandbits(64):016x}-{seq}"),
        ],
        status=Status(code=Status.STATUS_CODE_ERROR, message="upstream overloaded") if failed
        else Status(code=Status.STATUS_CODE_OK),
    )
    for name, ts in (("queued", queued), ("admitted", admitted), ("first_token", first_token),
                     ("last_token", last_token), ("released", released)):
        span.events.add(name=name, time_unix_nano=ts)
    span.events[0].attributes.append(kv("queue.depth", rng.randint(0, 64)))
    return span


def make_request(index: int, n_batches: int, batch: int, seed: int, anchor_ns: int) -> ExportTraceServiceRequest:
    """Request `index` of `n_batches`: one instance's `batch` spans, later requests later in time."""
    rng = random.Random(seed * 1_000_003 + index)
    service, instance = INSTANCES[index % len(INSTANCES)]
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.extend([
        kv("service.name", service), kv("service.instance.id", instance), kv("service.version", "2.14.3"),
        kv("deployment.environment", "bench"), kv("host.name", f"node-{index % len(INSTANCES):02d}"),
        kv("telemetry.sdk.name", "opentelemetry"), kv("telemetry.sdk.language", "python"),
    ])
    ss = rs.scope_spans.add()
    ss.scope.name, ss.scope.version = "llm_gateway.tracing", "2.14.3"
    t0 = anchor_ns + SPREAD_NS * index // max(n_batches, 1)
    step = max(SPREAD_NS // max(n_batches, 1) // max(batch, 1), 1)
    ss.spans.extend(_attempt(rng, t0 + i * step + rng.randrange(step), index * batch + i) for i in range(batch))
    return req


def build_bodies(spans: int, batch: int, seed: int = 1, anchor_ns: int | None = None) -> list[bytes]:
    """Serialized request bodies holding `spans` spans in total, `batch` per body (the last may hold fewer)."""
    anchor_ns = default_anchor_ns() if anchor_ns is None else anchor_ns
    n_batches = -(-spans // batch)
    bodies = []
    for index in range(n_batches):
        size = min(batch, spans - index * batch)
        bodies.append(make_request(index, n_batches, size, seed, anchor_ns).SerializeToString())
    return bodies
