"""Real OpenTelemetry SDK exporters (OTLP/HTTP and OTLP/gRPC) against a live server."""
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

from ingest.grpc_server import build_server
from ingest.pipeline import get_writer
from tests.factories import BASE_NS, MS
from tests.helpers import attempts

pytestmark = pytest.mark.slow


def _provider(exporter, service="gw", instance="gw-a"):
    provider = TracerProvider(resource=Resource.create({"service.name": service, "service.instance.id": instance}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def _emit_retried_request(tracer, t0=BASE_NS):
    """A run of two attempts: the first times out, the second succeeds on a new connection.

    attempt 1: starts t0, queued->admitted 50 ms, fails at 1000 ms.
    attempt 2: starts t0 + 1500 ms; connect stage 40 ms; queue 10 ms; first token 10+40+200 = 250 ms
               after queued (t_first_token = 250 - 10 - 40 = 200); stream 600; post 25.
    """
    attrs = {"tenant.id": "acme", "llm.route": "/chat", "gen_ai.request.model": "m1", "llm.run.id": "run-1",
             "llm.scheduler.cap": 8}
    first = tracer.start_span("llm.request", kind=SpanKind.CLIENT, start_time=t0,
                              attributes={**attrs, "llm.attempt": 1, "llm.retry.cause": "timeout", "llm.connection.reused": True})
    first.add_event("queued", timestamp=t0)
    first.add_event("admitted", timestamp=t0 + 50 * MS)
    first.set_status(Status(StatusCode.ERROR, "timeout"))
    first.end(end_time=t0 + 1000 * MS)
    t1 = t0 + 1500 * MS
    second = tracer.start_span("llm.request", kind=SpanKind.CLIENT, start_time=t1,
                               attributes={**attrs, "llm.attempt": 2, "llm.connection.reused": False})
    connect = tracer.start_span("connect", context=set_span_in_context(second), start_time=t1,
                                attributes={"llm.stage": "connect"})
    connect.end(end_time=t1 + 40 * MS)
    for name, offset in (("queued", 0), ("admitted", 10), ("first_token", 260), ("last_token", 860), ("released", 885)):
        second.add_event(name, timestamp=t1 + offset * MS)
    second.end(end_time=t1 + 885 * MS)


def _assert_stored(project_id):
    get_writer().flush(force=True)
    rows = attempts(project_id, order="attempt")
    assert [r["attempt"] for r in rows] == [1, 2]
    failed, final = rows
    assert (failed["status"], failed["retry_cause"], failed["t_queue_ms"], failed["t_retry_ms"]) == ("error", "timeout", 50, None)
    # final attempt: t_conn = the 40 ms connect stage; t_first_token = 260 - 10 - 40 = 210 ms; t_retry = 1500 ms
    assert (final["t_queue_ms"], final["t_conn_ms"], final["t_first_token_ms"]) == (10, 40, 210)
    assert (final["t_stream_ms"], final["t_post_ms"], final["t_retry_ms"]) == (600, 25, 1500)
    assert (final["tenant"], final["route"], final["service"], final["instance"], final["cap"]) == ("acme", "/chat", "gw", "gw-a", 8)


def test_http_exporter_spans_are_stored_with_buckets(live_server, clickhouse, alpha):
    project, key = alpha
    exporter = HttpExporter(endpoint=f"{live_server.url}/v1/traces", headers={"Authorization": f"Bearer {key}"})
    provider = _provider(exporter)
    _emit_retried_request(provider.get_tracer("test"))
    provider.shutdown()
    _assert_stored(project.id)


def test_grpc_exporter_spans_are_stored_with_buckets(transactional_db, clickhouse, alpha):
    project, key = alpha
    server, port = build_server("127.0.0.1", 0)
    server.start()
    try:
        exporter = GrpcExporter(endpoint=f"127.0.0.1:{port}", insecure=True, headers=(("authorization", f"Bearer {key}"),))
        provider = _provider(exporter)
        _emit_retried_request(provider.get_tracer("test"))
        provider.shutdown()
    finally:
        server.stop(grace=None)
    _assert_stored(project.id)


def test_grpc_rejects_unknown_key(transactional_db, clickhouse):
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    from tests import factories as f

    server, port = build_server("127.0.0.1", 0)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            with pytest.raises(grpc.RpcError) as caught:
                stub.Export(f.request(f.attempt()), metadata=(("authorization", "Bearer nope"),))
    finally:
        server.stop(grace=None)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "unknown_key" in caught.value.details()
