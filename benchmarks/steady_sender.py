"""A steady sender of simulated traffic over OTLP/HTTP in a process of its own: what `make bench-live` runs beside up.

    .venv/bin/python benchmarks/steady_sender.py --url http://127.0.0.1:8000 --key KEY [--rate 5000] [--trickle]

Sends `--rate` spans/s of the simulator's healthy traffic (runs with their app span, stages and attempts, as
simulator/emit.py sends them) over `--services` services svc-0.. (the backfill's names), `--batch` spans a request
(the OpenTelemetry SDK's 512 by default), from `--senders` keep-alive connections; `--trickle` adds the demo's live
trickle (simulator/demo.py: its four services at 0.5 requests/s each, in real time through the SDK).

TRICKY: the simulator and the SDK cost ~80 us of CPU a span, 0.4 of a core at 5,000 spans/s, which on a 2-core
machine would be taken from the process measured. So `--pool` seconds of traffic are simulated and encoded once,
before "ready" is printed, and then sent again and again: each time with its instants moved to the wall clock, the
trace ids' last 8 bytes and the run ids' suffix made new (so no span, run or trace repeats). Rewriting a request
costs ~10 us a span. Stopped by SIGINT/SIGTERM, it prints one line of JSON: spans sent, failures, how late it fell
behind the schedule, its CPU seconds.
"""
import argparse
import json
import queue
import resource
import signal
import struct
import sys
import threading
import time
from pathlib import Path

import requests
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export import SpanExportResult

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from simulator.emit import Emitter, make_exporter  # noqa: E402
from simulator.model import simulate  # noqa: E402
from simulator.runner import run_simulation  # noqa: E402
from simulator.scenarios import DEMO_SERVICES, PRESETS  # noqa: E402

TRICKLE_RPS = 0.5  # simulator/demo.py's LIVE_RPS
POOL_BASE_NS, WARM_S = 10**18, 30.0  # the pool's simulated clock starts here; its first WARM_S are not sent


class Capture:
    """An exporter that keeps each batch as a request body, with the latest end among its spans (ns)."""

    def __init__(self):
        self.bodies: list[tuple[int, bytes, int]] = []  # (latest end ns, body, spans)

    def export(self, batch) -> SpanExportResult:
        self.bodies.append((max(s.end_time for s in batch), encode_spans(batch).SerializeToString(), len(batch)))
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def spans_of(run) -> int:
    """Spans simulator/emit.py sends for a run: its app span and stages, each attempt and the attempt's stages."""
    return 1 + len(run.stages) + sum(1 + len(a.stages) for a in run.attempts)


def build_pool(rate: float, seconds: float, services: int, batch: int, seed: int) -> list[tuple[float, bytes, int]]:
    """(seconds into the pool when due, body, spans) for `seconds` of healthy traffic at about `rate` spans/s; the
    bodies' instants are POOL_BASE_NS + simulated time, the pool's second 0 at POOL_BASE_NS + WARM_S."""
    scenario, runs = PRESETS["healthy"], []
    for _ in range(3):  # the rate of requests that gives `rate` spans/s, from the runs simulated at the last guess
        per_run = sum(map(spans_of, runs)) / len(runs) if runs else 5.7
        scenario = PRESETS["healthy"].at_rps(rate / per_run / services)  # instances scaled: the same load on each
        # the runs ending in the pool's seconds, after WARM_S of simulated traffic (the steady state, queues filled)
        runs = sorted((run for k in range(services)
                       for run in simulate(scenario, WARM_S + seconds, seed=seed + k, service=f"svc-{k}")
                       if WARM_S * 1000 <= run.end < (WARM_S + seconds) * 1000), key=lambda r: r.end)
        if abs(sum(map(spans_of, runs)) / seconds / rate - 1) < 0.03:
            break
    capture = Capture()
    emitter = Emitter(capture, POOL_BASE_NS, seed=seed)
    emitter.processor.batch_size = batch
    for run in runs:
        emitter.emit(run, cap=scenario.cap, resource=scenario.resource)
    emitter.close()
    return [((end - POOL_BASE_NS) / 1e9 - WARM_S, body, n) for end, body, n in capture.bodies]


def shifted(body: bytes, delta_ns: int, tag: bytes, run_suffix: str) -> bytes:
    """The body with every instant moved by delta_ns, trace ids ending in `tag` (8 bytes), run ids + run_suffix."""
    request = ExportTraceServiceRequest.FromString(body)
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                span.trace_id = span.trace_id[:8] + tag
                span.start_time_unix_nano += delta_ns
                span.end_time_unix_nano += delta_ns
                for event in span.events:
                    event.time_unix_nano += delta_ns
                for attribute in span.attributes:
                    if attribute.key == "llm.run.id":
                        attribute.value.string_value += run_suffix
    return request.SerializeToString()


class Sender:
    """Sends the pool over and over on schedule from `senders` threads; counts what was sent and how late."""

    def __init__(self, url: str, key: str, pool: list, senders: int):
        self.url, self.pool = f"{url}/v1/traces", pool
        self.headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"}
        self.todo: queue.Queue = queue.Queue(maxsize=senders * 2)
        self.stop = threading.Event()
        self.sent = self.failed = self.bodies = 0
        self.late_s: list[float] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._post, daemon=True) for _ in range(senders)]

    def run(self, pool_s: float) -> None:
        for thread in self.threads:
            thread.start()
        nonce, began_ns, cycle = int(time.time()) & 0xFFFFFFFF, time.time_ns(), 0
        while not self.stop.is_set():
            tag, suffix = struct.pack(">II", nonce, cycle), f".{nonce:x}.{cycle}"
            for due_s, body, n in self.pool:
                due_ns = began_ns + int((cycle * pool_s + due_s) * 1e9)
                if self.stop.wait(max(0.0, (due_ns - time.time_ns()) / 1e9)):
                    break
                self.late_s.append((time.time_ns() - due_ns) / 1e9)
                # the pool's second due_s lands at due_ns
                delta_ns = due_ns - int(due_s * 1e9) - POOL_BASE_NS - int(WARM_S * 1e9)
                self.todo.put((shifted(body, delta_ns, tag, suffix), n))
            cycle += 1
        for _ in self.threads:
            self.todo.put(None)
        for thread in self.threads:
            thread.join(30)

    def _post(self) -> None:
        with requests.Session() as session:
            while (item := self.todo.get()) is not None:
                body, n = item
                try:
                    ok = session.post(self.url, data=body, headers=self.headers, timeout=60).status_code == 200
                except requests.RequestException:
                    ok = False
                with self.lock:
                    self.bodies += 1
                    self.sent, self.failed = self.sent + n * ok, self.failed + n * (not ok)


def trickle(url: str, key: str, stop: threading.Event, seed: int) -> list[threading.Thread]:
    """The demo's live trickle: each of its services at TRICKLE_RPS in real time, through the SDK (threads)."""
    def one(k: int, service: str, scenario) -> None:
        emitter = Emitter(make_exporter(f"{url}/v1/traces", key, "http"), time.time_ns(), seed=seed + k)
        run_simulation(emitter, scenario.at_rps(min(TRICKLE_RPS, scenario.rps)), 30 * 86400.0, seed + k, service,
                       live=True, stop=stop)
        emitter.close()
    threads = [threading.Thread(target=one, args=(k, service, scenario), daemon=True)
               for k, (service, (scenario, _)) in enumerate(DEMO_SERVICES.items())]
    for thread in threads:
        thread.start()
    return threads


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="up's base URL, http://host:port")
    p.add_argument("--key", required=True, help="an ingest key")
    p.add_argument("--rate", type=float, default=5000, help="spans/s (0: none, only the trickle)")
    p.add_argument("--services", type=int, default=10)
    p.add_argument("--batch", type=int, default=512, help="spans a request")
    p.add_argument("--senders", type=int, default=4, help="connections sending at once")
    p.add_argument("--pool", type=float, default=60.0, help="seconds of traffic simulated once and sent again")
    p.add_argument("--trickle", action="store_true", help="also the demo's live trickle")
    p.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    a = p.parse_args()
    pool = build_pool(a.rate, a.pool, a.services, a.batch, a.seed) if a.rate > 0 else []
    spans = sum(n for _, _, n in pool)
    print(f"ready: {spans / a.pool:,.0f} spans/s in {len(pool)} requests a cycle of {a.pool:.0f} s; "
          f"built in {cpu_s():.1f} CPU-s", flush=True)
    wait_healthy(a.url)
    cpu_before, began = cpu_s(), time.monotonic()
    sender, stop = Sender(a.url, a.key, pool, a.senders), threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: (sender.stop.set(), stop.set()))
    trickles = trickle(a.url, a.key, stop, a.seed) if a.trickle else []
    if pool:
        sender.run(a.pool)
    while not stop.wait(1.0):
        pass
    for thread in trickles:
        thread.join(10)
    took = time.monotonic() - began
    late = sorted(sender.late_s) or [0.0]
    print(json.dumps({"seconds": round(took, 1), "spans_sent": sender.sent, "spans_failed": sender.failed,
                      "spans_per_s": round(sender.sent / took), "late_max_s": round(late[-1], 3),
                      "late_p95_s": round(late[int(0.95 * (len(late) - 1))], 3),
                      "cpu_s": round(cpu_s() - cpu_before, 1)}), flush=True)
    return 0


def wait_healthy(url: str, timeout_s: float = 300) -> None:
    """Until up answers /healthz (the bench starts this sender beside up, to build the pool meanwhile)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{url} did not answer /healthz within {timeout_s:.0f} s")


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
