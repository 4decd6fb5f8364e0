"""`manage.py serve_otlp_grpc` as its own process: the production gRPC receiver."""
import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.factories import BASE_NS, MS
from tests.live import UpProcess

pytestmark = pytest.mark.slow


def _listening(port: int) -> bool:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=0.5)
            return True
        except grpc.FutureTimeoutError:
            return False


def test_serve_otlp_grpc_stores_spans_and_drains_on_sigint(tmp_path):
    server = UpProcess(tmp_path)
    server.manage("migrate", "--noinput")
    server.manage("migrate_clickhouse")  # production runs it as a one-shot job before the receivers
    key = server.manage("create_api_key", "--project", "g", "--scope", "ingest").strip()
    server.spawn(["serve_otlp_grpc", "--host", "127.0.0.1", "--port", str(server.port)], lambda: _listening(server.port))
    try:
        provider = TracerProvider(resource=Resource.create({"service.name": "engine"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
            endpoint=f"127.0.0.1:{server.port}", insecure=True, headers=(("authorization", f"Bearer {key}"),))))
        tracer = provider.get_tracer("t")
        for i in range(50):
            start = BASE_NS + i * 1000 * MS
            span = tracer.start_span("llm_request", start_time=start, attributes={
                "gen_ai.latency.time_in_queue": 0.05, "gen_ai.latency.time_to_first_token": 0.25, "gen_ai.latency.e2e": 1.0})
            span.end(end_time=start + 1010 * MS)
        provider.shutdown()
    finally:
        server.stop()  # SIGINT: stop serving, then drain the spool into ClickHouse
    assert server.proc.returncode == 0
    # vLLM form: t_queue = 50 ms, TTFT = 250 ms, first_token -> e2e = 750 ms of stream, 10 ms after e2e
    rows = server.query_json(
        "SELECT count(), min(role), min(form), "
        "round(avg(toUnixTimestamp64Nano(admitted_at) - toUnixTimestamp64Nano(queued_at)) / 1e6), "
        "round(avg(toUnixTimestamp64Nano(last_token_at) - toUnixTimestamp64Nano(first_token_at)) / 1e6) FROM spans")
    assert rows == [[50, "attempt", "vllm", 50, 750]]
