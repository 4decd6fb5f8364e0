"""The exporter set-up `make run` prints works when pasted verbatim, over OTLP/HTTP and over OTLP/gRPC."""
import os
import shlex
import subprocess
import sys

import pytest

from tests.live import ROOT, UpProcess, free_port

pytestmark = pytest.mark.slow

# What `opentelemetry-instrument` does before the program runs: opentelemetry-distro's defaults (OTEL_TRACES_EXPORTER
# =otlp), then the SDK's configurator, reading only OTEL_* variables (it picks the exporter class from
# OTEL_EXPORTER_OTLP_TRACES_PROTOCOL). Then one LLM call span (vLLM's form).
SEND_ONE_SPAN = """
from opentelemetry import trace
from opentelemetry.sdk._configuration import _OTelSDKConfigurator

_OTelSDKConfigurator().configure()
span = trace.get_tracer("banner").start_span("llm_request", attributes={
    "gen_ai.latency.time_in_queue": 0.05, "gen_ai.latency.time_to_first_token": 0.25, "gen_ai.latency.e2e": 1.0})
span.end()
trace.get_tracer_provider().shutdown()
"""


def _setups(banner: str) -> dict[str, dict[str, str]]:
    """protocol -> the OTEL_* assignments of the banner's line for it, exactly as printed."""
    setups = {}
    for line in banner.splitlines():
        if "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=" in line:
            pairs = dict(word.split("=", 1) for word in shlex.split(line))
            setups[pairs["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]] = pairs
    return setups


def _send(setup: dict[str, str], service: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(setup, OTEL_SERVICE_NAME=service, OTEL_TRACES_EXPORTER="otlp", OTEL_METRICS_EXPORTER="none",
               OTEL_LOGS_EXPORTER="none")
    result = subprocess.run([sys.executable, "-c", SEND_ONE_SPAN], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Failed to export" not in result.stderr, result.stderr


def test_the_banners_exporter_lines_store_a_span_over_each_protocol(tmp_path):
    up = UpProcess(tmp_path)
    up.manage("migrate", "--noinput")
    grpc_port = free_port()
    printed = up.manage("shell", "-c", "from latency_obs.demo import banner; "
                        f"print(banner('{up.url}/', 'http://127.0.0.1:{grpc_port}'))")
    setups = _setups(printed)
    assert set(setups) == {"http/protobuf", "grpc"}
    assert setups["grpc"]["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == f"http://127.0.0.1:{grpc_port}"
    up.spawn(["up", "--port", str(up.port), "--grpc-port", str(grpc_port)], up._healthy)
    try:
        for protocol, setup in setups.items():
            _send(setup, f"banner-{protocol.split('/')[0]}")
    finally:
        up.stop()
    rows = up.query_json("SELECT service, count(), min(role) FROM spans FINAL GROUP BY service ORDER BY service")
    assert rows == [["banner-grpc", 1, "attempt"], ["banner-http", 1, "attempt"]]
