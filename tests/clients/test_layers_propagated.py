"""Two layers with real propagation (issue 35 item 6): the openai client (OpenInference and httpx instrumented) calls a
gateway built on Flask with Flask's OTel instrumentation, whose openai client (the same instrumentations: its call is
the gateway's attempt, httpx injects `traceparent` with the SDK's propagator) streams from a local engine over HTTP
through a constant-latency network path (tests/clients/engine_server.py LatencyPipe); the engine continues the trace
from `traceparent` with opentelemetry.propagate.extract and emits vLLM's `llm_request` server span. Every process
exports OTLP/HTTP to the live product. The cross-layer buckets (docs/cross-layer.md) equal the injected delays within
5 %: t_gateway = the gateway's own work around its call, t_network_ttft = t_network_total = the path's delay out and
back.
"""
import statistics
import subprocess
from datetime import datetime, timedelta, timezone

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from analysis.reads import layers
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests.clients.engine_server import EngineServer, LatencyPipe
from tests.clients.openai_server import Timing
from tests.clients.tools import ROOT, _wait_up, clean_env, free_port, settle
from tests.clients.venvs import client_python

pytestmark = pytest.mark.slow
APP, GATEWAY, ENGINE = "chat-app", "chat-gateway", "chat-engine"
CALLS = 12
# the engine: 100 ms in its queue, its first token 200 ms later, then 10 more 20 ms apart
TIMING, QUEUE_MS = Timing(first_ms=200, chunks=10, gap_ms=20), 100
# what is injected: 300 ms on the way out and 300 ms on the way back (both the first token and the end come back
# that late: 600 ms at each), and the gateway's own 300 ms before its call and 200 ms after it. What the spans add on
# top (the openai client building its request and parsing the first chunk, thread hand-offs in the pipe) is a few ms
# to ~20 ms on a loaded 2-core machine: well inside 5 % of these
OUT_MS, BACK_MS, BEFORE_MS, AFTER_MS = 300, 300, 300, 200
TOLERANCE = 0.05


def _engine_provider(endpoint: str, key: str) -> TracerProvider:
    """vLLM's exporter as --otlp-traces-endpoint sets it up: its resource, a batch processor, OTLP/HTTP (exporting
    when shut down: the live product shares this process, and its work on an export would delay the engine's
    threads and the pipe's, which the buckets would count as network)."""
    provider = TracerProvider(resource=Resource.create({
        "service.name": ENGINE, "service.instance.id": "gpu-0", "vllm.instrumenting_module_name": "vllm.llm_engine"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"{endpoint}/v1/traces", headers={"Authorization": f"Bearer {key}"}), schedule_delay_millis=120_000))
    return provider


def test_the_buckets_between_real_layers_equal_the_injected_delays(transactional_db, clickhouse, alpha, live_server,
                                                                  tmp_path):
    project, key = alpha
    python = str(client_python("gateway"))
    began = datetime.now(timezone.utc)
    engine_spans = _engine_provider(live_server.url, key)
    port = free_port()
    with EngineServer(engine_spans.get_tracer("vllm.tracing"), TIMING, QUEUE_MS) as engine, \
            LatencyPipe(engine.httpd.server_port, OUT_MS, BACK_MS) as pipe:
        log = open(tmp_path / "gateway.log", "w")
        gateway = subprocess.Popen(
            [python, "-m", "tests.clients.layered_gateway", "serve", str(port), f"http://127.0.0.1:{pipe.port}/v1",
             str(BEFORE_MS), str(AFTER_MS)], env=clean_env(LO_ENDPOINT=live_server.url, LO_KEY=key,
                                                           OTEL_SERVICE_NAME=GATEWAY),
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_up(f"http://127.0.0.1:{port}/health", gateway, tmp_path / "gateway.log", timeout_s=60)
            done = subprocess.run(
                [python, "-m", "tests.clients.layered_gateway", "call", f"http://127.0.0.1:{port}/v1", str(CALLS)],
                env=clean_env(LO_ENDPOINT=live_server.url, LO_KEY=key, OTEL_SERVICE_NAME=APP), cwd=ROOT,
                capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr[-3000:]
        finally:
            gateway.terminate()  # SIGTERM: the gateway exports what it holds, then exits
            gateway.wait(timeout=30)
            log.close()
        served = engine.served
    engine_spans.shutdown()
    assert len(served) == CALLS
    for service in (APP, GATEWAY, ENGINE):
        settle(project.id, service)
    end = datetime.now(timezone.utc) + timedelta(minutes=1)
    materialize(project.id, began - timedelta(hours=1), end + timedelta(hours=1))
    found = layers.for_gateway(Scope(project.id, GATEWAY, began - timedelta(minutes=1), end))
    # every call of the gateway is linked to the engine's request it made, through httpx's span between them
    assert (found.linked, found.seen_at_one_layer, [e.engine for e in found.engines]) == (CALLS, 0, [ENGINE])
    measured = {name: found.bucket(name, "p50") for name in layers.BUCKETS}
    injected = {"t_gateway": BEFORE_MS + AFTER_MS, "t_network_ttft": OUT_MS + BACK_MS,
                "t_network_total": OUT_MS + BACK_MS}
    print("measured p50", measured, "p95", {name: found.bucket(name) for name in layers.BUCKETS}, "injected", injected, "engine as served (p50 ms)",
          {k: statistics.median(s[k] for s in served) for k in served[0]})
    for name, ms in injected.items():
        assert measured[name] == pytest.approx(ms, rel=TOLERANCE), (name, measured, injected)


def test_litellms_proxy_forwards_its_callers_traceparent_so_the_engine_is_linked_to_the_caller(
        transactional_db, clickhouse, alpha, live_server, tmp_path):
    """LiteLLM's proxy as the gateway, where its spans allow: with `forward_traceparent_to_llm_provider` it sends the
    engine the traceparent its caller sent it, unchanged, so the engine's span is a sibling of the proxy's server span
    (both under the caller's HTTP span), not under the proxy's `chat` call (which sits under fastapi.dependencies, not
    the server span). The product links what the spans say: the caller's call to the engine, the proxy inside the gap
    between them; the proxy's calls are seen at one layer only."""
    from tests.clients import tools

    project, key = alpha
    python, calls, proxy_service = str(client_python("gateway")), 4, "litellm-gateway"
    began = datetime.now(timezone.utc)
    engine_spans = _engine_provider(live_server.url, key)
    env = tools.clean_env(OTEL_EXPORTER="otlp_http", OTEL_ENDPOINT=f"{live_server.url}/v1/traces",
                          OTEL_HEADERS=f"Authorization=Bearer%20{key}", OTEL_SERVICE_NAME=proxy_service,
                          LITELLM_OTEL_V2="true")
    with EngineServer(engine_spans.get_tracer("vllm.tracing"), TIMING, QUEUE_MS) as engine, \
            LatencyPipe(engine.httpd.server_port, OUT_MS, BACK_MS) as pipe, \
            tools.litellm_proxy(f"http://127.0.0.1:{pipe.port}/v1", env, tmp_path,
                                settings="  forward_traceparent_to_llm_provider: true\n") as proxy:
        done = subprocess.run(
            [python, "-m", "tests.clients.layered_gateway", "call", proxy, str(calls), "stream"],
            env=clean_env(LO_ENDPOINT=live_server.url, LO_KEY=key, OTEL_SERVICE_NAME=APP, GATEWAY_KEY=tools.PROXY_KEY),
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        settle(project.id, proxy_service, quiet_s=8)  # LiteLLM ends its spans in a worker after the stream
    engine_spans.shutdown()
    for service in (APP, proxy_service, ENGINE):
        settle(project.id, service)
    end = datetime.now(timezone.utc) + timedelta(minutes=1)
    materialize(project.id, began - timedelta(hours=1), end + timedelta(hours=1))
    window = (began - timedelta(minutes=1), end)
    proxied = layers.for_gateway(Scope(project.id, proxy_service, *window))
    assert (proxied.attempts, proxied.linked, proxied.seen_at_one_layer) == (calls, 0, calls)
    caller = layers.for_gateway(Scope(project.id, APP, *window))
    assert (caller.linked, [e.engine for e in caller.engines]) == (calls, [ENGINE])
    # the caller's gap holds the path's 600 ms and the proxy's own time on the way (auth, routing, its relay)
    assert caller.bucket("t_network_ttft", "p50") > OUT_MS + BACK_MS
