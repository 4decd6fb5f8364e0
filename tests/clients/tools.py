"""Driving third-party gateways and SDKs for tests/clients/test_litellm.py and test_sdks.py: each tool runs from its
own venv (venvs.py) against the local streaming server (openai_server.py) and exports to the live product, or its
recorded OTLP bodies (record_traceloop.py) are replayed; then the product's own answer is read back.

The traffic: 200 streaming calls, 10 at a time; the server gives the first token 300 ms after a request,
then 20 more 50 ms apart (decode 50 ms per token), and answers the first try of 2 calls in 20 with a 500, so the
tool retries them.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from statistics import median

from tests.clients.openai_server import FailOnce, OpenAIServer, Timing
from tests.clients.venvs import client_python

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).resolve().parent / "recorded"
TIMING = Timing(first_ms=300, chunks=20, gap_ms=50)
# TRICKY: at 20 concurrent streams on 2 cores LiteLLM's v2 proxy never exported 16 of its 220 `chat` spans (and v1
# lost some too): 10 at a time loses none, and keeps the proxy's own delay before the first token under 15 %
CALLS, CONCURRENCY, FAIL_EVERY = 200, 10, 10
RETRIED = CALLS // FAIL_EVERY  # calls whose first try fails: 20
DECODE_MS = TIMING.gap_ms  # the server's time per output token after the first
TTFT_TOLERANCE = 0.15
PROXY_KEY = "sk-lo-test-3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e"  # the LiteLLM proxy refuses to start with a weak key


@dataclass(frozen=True)
class Expect:
    """What the product must read from a tool's 200 calls (docs/sending-traces.md, section 6)."""
    attempts: int  # stored attempts: the calls, plus each failed try where the tool gives it its own span
    failed: int  # failed attempts
    ttft: bool  # TTFT measured on every call (else on none: NULL, never 0 or the whole call)
    verdicts: tuple  # the verdicts the data supports
    ttft_unknown: int = 0  # calls whose first-token time comes before their final try began: TTFT NULL, never wrong


def upstream() -> OpenAIServer:
    return OpenAIServer(TIMING, FailOnce(FAIL_EVERY))


def clean_env(**extra) -> dict:
    """This process's environment without OTEL_* and LO_* (a test's settings must not leak into the tool), nor
    DATABASE_URL: CI sets it for the product's PostgreSQL, and LiteLLM's proxy then wants a database of its own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OTEL_", "LO_", "LITELLM", "TRACELOOP")) and k != "DATABASE_URL"}
    env.update(extra)
    return env


def drive(venv: str, tool: str, base_url: str, env: dict) -> dict:
    """tests/clients/drive_tool.py in `venv`'s python: {"calls", "failed", "ttft_ms", "total_ms"} as the client saw,
    and "errors": the first few failed calls' errors as the client raised them (for the failure's message)."""
    done = subprocess.run([str(client_python(venv)), "-m", "tests.clients.drive_tool", tool, base_url, str(CALLS),
                           str(CONCURRENCY)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    errors = [line[:300] for line in done.stderr.splitlines() if " failed: " in line][:5]
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "errors": errors}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def litellm_proxy(upstream_url: str, env: dict, workdir: Path, settings: str = ""):
    """The LiteLLM proxy (its CLI, one worker) routing model local-gpt to upstream_url with 2 retries and the otel
    callback, as its docs configure it; yields its base URL. Stopped with SIGTERM, which flushes its exporter.
    settings: more `litellm_settings` lines (e.g. "  forward_traceparent_to_llm_provider: true\n")."""
    config = workdir / "litellm.yaml"
    config.write_text(
        "model_list:\n  - model_name: local-gpt\n    litellm_params:\n      model: openai/local-gpt\n"
        f"      api_base: {upstream_url}\n      api_key: test-key\n"
        "litellm_settings:\n  callbacks: [\"otel\"]\n  num_retries: 2\n" + settings)
    port = free_port()
    cli = client_python("litellm").parent / "litellm"
    log = open(workdir / "litellm.log", "w")
    proxy = subprocess.Popen([str(cli), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                             env={**env, "LITELLM_MASTER_KEY": PROXY_KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
                             stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    try:
        _wait_up(f"http://127.0.0.1:{port}/health/liveliness", proxy, workdir / "litellm.log")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proxy.terminate()
        try:
            proxy.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.wait()
        log.close()


def _wait_up(url: str, process, log: Path, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"{url} not up after {timeout_s} s: {log.read_text()[-3000:]}")


def settle(project_id: int, service: str, quiet_s: float = 4.0, timeout_s: float = 90.0) -> int:
    """Wait until the service's stored spans stop growing for quiet_s (the exporters' batches have all arrived and been
    written); returns how many there are."""
    from ingest.pipeline import get_writer
    from store import client

    deadline, last, since = time.monotonic() + timeout_s, -1, time.monotonic()
    while time.monotonic() < deadline:
        get_writer().flush(force=True)
        [(count,)] = client.query_rows(
            "SELECT count() FROM spans FINAL WHERE project_id = {p:UInt32} AND service = {s:String}",
            {"p": project_id, "s": service})
        if count != last:
            last, since = count, time.monotonic()
        elif count and time.monotonic() - since >= quiet_s:
            return count
        time.sleep(0.5)
    raise AssertionError(f"{service}: spans still arriving after {timeout_s} s ({last} stored)")


def diagnosis(http, project_id: int, key: str, service: str, since: datetime) -> dict:
    """The diagnosis API's answer for the service from `since` to a minute from now, its hours materialized first."""
    from analysis.rollups.materialize import materialize

    end = datetime.now(timezone.utc) + timedelta(minutes=1)
    materialize(project_id, since, end)
    answer = http.get("/api/v1/diagnosis", {"service": service, "start": since.isoformat(), "end": end.isoformat()},
                      HTTP_AUTHORIZATION=f"Bearer {key}")
    assert answer.status_code == 200, answer.content[:500]
    return answer.json()


def check(answer: dict, seen: dict, expect: Expect, sent: list, served_ms: list | None = None) -> dict:
    """The product's reading of a tool's calls against the client's own timing and the server's log; returns the
    measured figures (for the report).

    served_ms: for a gateway, the first chunks as the server served them (its spans' client is the gateway itself):
    its TTFT is compared with those, and must not exceed what the gateway's own caller waited. TRICKY: that caller
    also waits for the gateway to relay the chunk, which no span shows: 326 ms against the spans' 303 on a quiet
    machine, 404 against 308 at a load average of 10."""
    evidence, retries = answer["evidence"], answer["evidence"]["retries"]
    # every call succeeded, after its retry (one run of make test, 2026-11-30: 123 of the LiteLLM proxy's 200 calls
    # failed in the client while the proxy logged 200 for each; what the client raised is in the message now)
    assert seen["failed"] == 0 and len(seen["ttft_ms"]) == CALLS, (seen["failed"], seen.get("errors"))
    assert sorted(status for _, status in sent) == [200] * CALLS + [500] * RETRIED  # what the server answered
    # counted exactly: every call one run, every try the tool gives a span of one attempt
    counted = (retries["runs"], evidence["requests"], retries["failed_attempts"])
    assert counted == (CALLS, expect.attempts, expect.failed), (counted, retries)
    ttft, client_ttft = evidence["buckets"]["ttft"], median(seen["ttft_ms"])
    if expect.ttft:
        reference = median(served_ms) if served_ms else client_ttft
        assert ttft["count"] == CALLS - expect.ttft_unknown, ttft
        assert ttft["p50"] >= reference * (1 - TTFT_TOLERANCE), (ttft, reference)
        assert ttft["p50"] <= client_ttft * (1 + TTFT_TOLERANCE), (ttft, client_ttft)
        # TRICKY: a gateway's span stamps the first chunk when its own event loop gets to it, between the server's
        # serving and the caller's receiving: on a machine that starves the gateway (its caller's TTFT 3.1 s against
        # 0.3 s served, make test on a slower machine, 2026-11-30) that stamp lags too (351 ms against 301), and
        # the two bounds above are what can be asked; where the caller waited about what was served, within 15 %
        if client_ttft <= reference * (1 + TTFT_TOLERANCE):
            assert ttft["p50"] <= reference * (1 + TTFT_TOLERANCE), (ttft, reference)
    else:  # not measured: never 0, never the whole call
        assert ttft["count"] == 0 and ttft["p50"] is None, ttft
    assert answer["verdict"] in expect.verdicts, (answer["verdict"], answer["path"])
    decode = evidence["decode"]["ms_per_output_token_p50"]
    if answer["verdict"] == "decode_throughput":  # true where decode was measured, never under the server's own
        # (a busy machine slows a gateway's relay: 54 ms per token at a load average of 10)
        assert DECODE_MS * (1 - TTFT_TOLERANCE) <= decode < 2 * DECODE_MS, decode
    return {"runs": retries["runs"], "attempts": evidence["requests"], "failed": retries["failed_attempts"],
            "ttft_p50": ttft["p50"], "ttft_p95": ttft["p95"], "client_ttft_p50": client_ttft,
            "served_ttft_p50": median(served_ms) if served_ms else None,
            "t_retry_p95": retries["t_retry"]["p95"], "t_retry_count": retries["t_retry"]["count"],
            "rate": retries["rate"], "decode_p50": decode, "verdict": answer["verdict"]}


def report(name: str, figures: dict) -> None:
    """One line per tool on stderr (pytest -s shows it): docs/sending-traces.md's table of gateways and SDKs is made from these."""
    print(f"\n[{name}] " + ", ".join(f"{k}={round(v, 1) if isinstance(v, float) else v}" for k, v in figures.items()),
          file=sys.stderr)


class Receiver:
    """A stand-in OTLP/HTTP endpoint (stdlib, in a thread) that keeps every /v1/traces body exactly as received and
    answers 200 with an empty ExportTraceServiceResponse; other signals are answered 200 and dropped."""

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from threading import Thread

        bodies = self.bodies = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/").endswith("/v1/traces"):
                    bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        self.thread = Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def record(venv: str, tool: str) -> Path:
    """Run `tool` from its venv against the local server, exporting to a Receiver; write its bodies to
    recorded/<tool>/NNNN.bin and what the client and the server saw to recorded/<tool>/client.json."""
    out = RECORDED / tool
    with upstream() as server, Receiver() as receiver:
        seen = drive(venv, tool, server.url, clean_env(LO_ENDPOINT=receiver.url, LO_KEY="recorded",
                                                       OTEL_SERVICE_NAME=f"{tool}-app"))
        time.sleep(1)  # a last export in flight
    assert receiver.bodies, f"{tool} exported nothing"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for i, body in enumerate(receiver.bodies):
        (out / f"{i:04d}.bin").write_bytes(body)
    (out / "client.json").write_text(json.dumps({**seen, "service": f"{tool}-app", "tries": server.tries}) + "\n")
    return out


def replay(url: str, key: str, tool: str) -> dict:
    """POST recorded/<tool>'s bodies to the product's /v1/traces, their times moved so that the first span starts
    90 s ago (the store refuses spans older than its retention); returns client.json (the client's own timing)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest, ExportTraceServiceResponse,
    )

    folder = RECORDED / tool
    requests = [ExportTraceServiceRequest.FromString(p.read_bytes()) for p in sorted(folder.glob("*.bin"))]
    spans = [s for r in requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]
    shift = time.time_ns() - 90 * 10**9 - min(s.start_time_unix_nano for s in spans)
    for s in spans:
        s.start_time_unix_nano += shift
        s.end_time_unix_nano += shift
        for event in s.events:
            event.time_unix_nano += shift
    for request in requests:
        post = urllib.request.Request(f"{url}/v1/traces", data=request.SerializeToString(), method="POST", headers={
            "Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(post, timeout=30) as answer:
            refused = ExportTraceServiceResponse.FromString(answer.read()).partial_success
            assert answer.status == 200 and not refused.rejected_spans, refused
    return json.loads((folder / "client.json").read_text())
