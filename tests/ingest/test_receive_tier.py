"""The receive tier: receivers with INGEST_WRITER=off only spool, `serve_writer` inserts what they spooled."""
import time
from pathlib import Path

import grpc
import pytest
import requests
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from benchmarks.payloads import build_bodies
from store import client
from store.errors import ClickHouseError
from store.reasons import Reason
from tests.factories import BASE_NS, MS
from tests.live import UpProcess, free_port


def _maps_chdb(pid: int) -> bool:
    """True when the process has chDB's library mapped (it is loaded only to open the embedded store)."""
    return "chdb" in Path(f"/proc/{pid}/maps").read_text()


def _segments(spool: Path) -> list[Path]:
    return sorted(spool.glob("*.seg")) + sorted(spool.glob("*.batch"))


def _grpc_listening(port: int) -> bool:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=0.5)
            return True
        except grpc.FutureTimeoutError:
            return False


def _send_grpc(port: int, key: str, spans: int) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "engine"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"127.0.0.1:{port}", insecure=True, headers=(("authorization", f"Bearer {key}"),))))
    tracer = provider.get_tracer("t")
    for i in range(spans):
        start = BASE_NS + i * 1000 * MS
        span = tracer.start_span("llm_request", start_time=start, attributes={
            "gen_ai.latency.time_in_queue": 0.05, "gen_ai.latency.time_to_first_token": 0.25, "gen_ai.latency.e2e": 1.0})
        span.end(end_time=start + 1010 * MS)
    provider.shutdown()


@pytest.mark.slow
def test_receivers_spool_without_chdb_and_serve_writer_stores_it(tmp_path):
    writer = UpProcess(tmp_path)
    writer.manage("migrate", "--noinput")
    writer.manage("migrate_clickhouse")
    key = writer.manage("create_api_key", "--project", "r", "--scope", "ingest,read").strip().splitlines()[-1]
    receiver = {"INGEST_WRITER": "off", "INGEST_FLUSH_INTERVAL_MS": "1000"}  # segments closed by age within the sleep
    web, grpc_rx = UpProcess(tmp_path, **receiver), UpProcess(tmp_path, **receiver)
    web.spawn(["serve_web", "--host", "127.0.0.1", "--port", str(web.port), "--threads", "4"], web._healthy)
    grpc_rx.port = free_port()
    grpc_rx.spawn(["serve_otlp_grpc", "--host", "127.0.0.1", "--port", str(grpc_rx.port)],
                  lambda: _grpc_listening(grpc_rx.port))
    try:
        headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}
        for body in build_bodies(2000, 500):
            assert requests.post(f"{web.url}/v1/traces", data=body, headers=headers, timeout=30).status_code == 200
        _send_grpc(grpc_rx.port, key, 50)
        # the status API reads ClickHouse: a receiver refuses rather than take the embedded store
        status = requests.get(f"{web.url}/api/v1/ingest/status", headers={"Authorization": f"Bearer {key}"}, timeout=30)
        assert status.status_code == 503
        assert not _maps_chdb(web.proc.pid) and not _maps_chdb(grpc_rx.proc.pid)
        time.sleep(1.5)  # INGEST_FLUSH_INTERVAL_MS: each receiver closes its own segments by age
        spool = tmp_path / "spool"
        assert _segments(spool), "the receivers spooled nothing"
        # the store is free: a writer process opens it (EmbeddedStoreBusy otherwise) and drains the spool
        writer.spawn(["serve_writer"], lambda: not _segments(spool), timeout=90)
    finally:
        for process in (web, grpc_rx, writer):
            process.stop()
    assert [p.proc.returncode for p in (web, grpc_rx, writer)] == [0, 0, 0]
    assert not _segments(spool)
    # 2,000 native attempts over OTLP/HTTP + 50 vLLM-form spans over gRPC, each stored once
    assert writer.query_json("SELECT count(), uniqExact(span_id) FROM spans") == [[2050, 2050]]


def test_a_receiver_never_opens_the_embedded_store(tmp_path):
    with override_settings(INGEST_WRITER=False, CLICKHOUSE_URL=f"chdb://{tmp_path}/clickhouse"):
        with pytest.raises(ClickHouseError) as refused:
            client._connect()
    assert refused.value.reason == Reason.STORE_BUSY
    assert not (tmp_path / "clickhouse").exists()


def test_serve_writer_refuses_to_run_as_a_receiver():
    with override_settings(INGEST_WRITER=False), pytest.raises(CommandError, match="INGEST_WRITER=off"):
        call_command("serve_writer")
