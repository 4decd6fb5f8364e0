"""Reliability drills (`make chaos`): each one breaks `manage.py up` on purpose and checks a promise.

  kill9            3 senders POST 200 native spans per request; kill -9 after 2.5-5 s; restart, drain, stop,
                   count. Repeated --rounds times on one store. Promise: 0 lost, 0 duplicated.
  clickhouse_down  under the same load, `manage.py inject_fault --inserts-fail-for N` (another process) makes
                   every INSERT fail for N s. Promise: /healthz 503 throughout the fault (after a 2 s grace:
                   the writer tries once a second), the spool grows, spans are still acknowledged; afterwards
                   (senders stopped) the spool drains and every acknowledged span is stored once.
  poison           one request whose spans start on 101 days (today and 100 days back). Retention 30 d: a 200
                   whose partial_success rejects the 71 older ones as timestamp_out_of_range. Retention 3650 d:
                   all 101 accepted, their INSERT refused (over 100 partitions), bisected, all stored. Promise
                   for both: spans sent right after are stored within 10 s, /healthz stays 200 without
                   writer_error, the spool drains, nothing is quarantined, nothing lost or duplicated.
  slow_clients     150 connections send the headers of a 100 kB POST /v1/traces and a few body bytes, then
                   one byte every 3 s or nothing. Meanwhile 20 each of GET /healthz, GET /login/ and a real
                   ingest POST, each on a new connection. Promise: all answered (200), the slowest under 1 s.

A span counts as acknowledged only when its request got a 200 without rejected spans. After `up` is stopped its
store is opened: stored = acknowledged span ids found, lost = acknowledged and not found, duplicated = rows -
distinct span ids (background merges are switched off on these stores, or they would fold a duplicate away).
Each drill starts its own `up` on its own temp data dir (benchmarks/chaos_kit.py); a failed drill keeps it and
prints where. One line of counts per drill, then a summary; exit status 1 when a promise failed.

    .venv/bin/python benchmarks/chaos.py [--drills kill9,clickhouse_down,poison,slow_clients] [--rounds 3]
        [--down-seconds 20]
"""
from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from functools import partial

import requests
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from chaos_kit import (DAY_NS, DrillServer, HealthPoller, Load, SlowClients, fault_file, healthz,
                       native_spans, post_spans)

DRILLS = ("kill9", "clickhouse_down", "poison", "slow_clients")
HEALTH_GRACE_S = 2.0  # the writer notices a failing INSERT at its next flush, a second or so after
LATER_SPANS_DEADLINE_S = 10.0
POISON_DAYS = 101
SLOW_CONNECTIONS, TIMED_REQUESTS, SLOWEST_S = 150, 20, 1.0


@dataclass
class Result:
    drill: str
    line: str = ""
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def check(self, ok: bool, promise: str) -> None:
        if not ok:
            self.failures.append(promise)


def counts_text(c) -> str:
    return f"acknowledged {c.acknowledged}  stored {c.stored}  lost {c.lost}  duplicated {c.duplicated}"


def _seconds(s: float | None) -> str:
    return "never" if s is None else f"{s:.1f} s"


def check_counts(result: Result, c) -> None:
    result.check(c.lost == 0, f"{c.lost} acknowledged span(s) lost")
    result.check(c.duplicated == 0, f"{c.duplicated} span row(s) stored twice")


def kill9(args, server: DrillServer) -> Result:
    result, acked, left, recovery = Result("kill9"), set(), [], []
    for round_ in range(args.rounds):
        server.start()
        load = Load(server.url, server.key).start()
        try:
            time.sleep(random.uniform(2.5, 5.0))  # the kill lands at a different moment of the writer's cycle
            server.kill()
        finally:
            load.stop()
        left.append(server.spool_segments_on_disk())
        result.check(len(load.acked) >= 400, f"round {round_ + 1}: the load did not get going before the kill")
        acked |= load.acked
        server.start()  # the new writer claims what the killed one left
        recovery.append(server.wait_drained())
        server.stop()
    c = server.count(acked)
    check_counts(result, c)
    result.line = (f"rounds {args.rounds}  {counts_text(c)}  (stored without a 200: {c.unacknowledged_stored}; "
                   f"segments left at kill {'/'.join(map(str, left))}; drained {max(recovery):.1f} s after restart)")
    return result


def clickhouse_down(args, server: DrillServer) -> Result:
    server.start()
    poller, load = HealthPoller(server.url), Load(server.url, server.key)
    poller.start()
    try:
        load.start()
        time.sleep(3)  # stored normally first
        server.manage("inject_fault", "--inserts-fail-for", str(args.down_seconds))
        fault_end = time.monotonic() + float(fault_file(server.data_dir).read_text()) - time.time()
        time.sleep(max(0.0, fault_end - time.monotonic()))
        load.stop()  # the senders stop when the fault ends; then the spool must drain
        server.wait_drained(timeout=180)
        drain_s = time.monotonic() - fault_end
    finally:
        load.stop()
        poller.stop()
    server.stop()
    return _judge_outage(server.count(load.acked), poller, load, fault_end - args.down_seconds, fault_end, drain_s)


def _judge_outage(c, poller: HealthPoller, load: Load, fault_start: float, fault_end: float, drain_s: float) -> Result:
    result = Result("clickhouse_down")
    during = poller.between(fault_start + HEALTH_GRACE_S, fault_end)
    n503 = sum(1 for p in during if p[1] == 503)
    in_fault = poller.between(fault_start, fault_end)
    max_bytes = max((p[2] for p in in_fault), default=0)
    # nothing leaves the spool during the fault: the first poll after it with fewer bytes saw a batch stored
    after = poller.between(fault_end, float("inf"))
    resumed = next((p[0] - fault_end for p in after if p[2] < after[0][2]), None) if after else None
    acked_in_fault = load.acked_between(fault_start, fault_end)
    other = {k: v for k, v in load.answers.items() if k != "200"}  # 503 spool_full and 429 are allowed answers
    odd = {k: v for k, v in other.items() if k != "503 spool_full" and not k.startswith("429")}
    result.check(bool(during) and n503 == len(during), f"/healthz 503 on {n503} of {len(during)} polls in the fault")
    result.check(bool(in_fault) and max_bytes > in_fault[0][2], "the spool did not grow during the fault")
    result.check(acked_in_fault > 0, "no span acknowledged during the fault")
    result.check(not odd, f"unexpected answers: {odd}")
    check_counts(result, c)
    result.line = (f"down {fault_end - fault_start:g} s  healthz 503 {n503}/{len(during)} polls  max spool "
                   f"{max_bytes / 2**20:.1f} MiB  {counts_text(c)}  (acknowledged during the fault {acked_in_fault}; "
                   f"answers other than 200: {other or 'none'}; first batch stored {_seconds(resumed)}, "
                   f"spool drained {drain_s:.1f} s after the fault)")
    return result


def poison(args, server: DrillServer, retention_days: int) -> Result:
    result = Result(f"poison_{retention_days}d")
    server.start()
    session = requests.Session()
    in_range, accepted, reasons = _send_poison(result, server, session, retention_days)
    later = native_spans()
    later_response = post_spans(session, server.url, server.key, later)
    result.check(later_response.status_code == 200, f"the later request got {later_response.status_code}")
    stored_s, health = _wait_stored(server, accepted + len(later))
    result.check(stored_s is not None and stored_s <= LATER_SPANS_DEADLINE_S,
                 f"later spans not stored within {LATER_SPANS_DEADLINE_S:g} s")
    result.check(not health, f"/healthz while storing: {health}")
    server.wait_drained(timeout=60)
    _, body = healthz(server.url)
    quarantined = body.get("quarantined_spans")
    result.check(quarantined == 0, f"{quarantined} span(s) quarantined")
    server.stop()
    bisected = sorted(set(server.log_codes(r"refused \(code (\d+)\); bisecting")))
    c = server.count(in_range | {s.span_id.hex() for s in later})
    check_counts(result, c)
    reason_text = ", ".join(f"{k} {v}" for k, v in reasons.items()) or "none"
    result.line = (f"retention {retention_days} d  accepted {accepted}  rejected {POISON_DAYS - accepted} "
                   f"({reason_text})  "
                   f"INSERT refused and bisected: {'code ' + ','.join(bisected) if bisected else 'no'}  "
                   f"later spans stored after {_seconds(stored_s)}  quarantined {quarantined}  {counts_text(c)}")
    return result


def _send_poison(result: Result, server: DrillServer, session, retention_days: int) -> tuple[set, int, dict]:
    """POST one span per day, today and 100 days back; check the answer. Returns (ids of the spans inside the
    retention, spans accepted, {reason: spans rejected})."""
    now = time.time_ns() - 60 * 10**9
    spans = [native_spans(1, start_ns=now - d * DAY_NS)[0] for d in range(POISON_DAYS)]
    in_range = {s.span_id.hex() for d, s in enumerate(spans) if d < retention_days}  # day 30 is 30 d + 60 s old
    response = post_spans(session, server.url, server.key, spans)
    rejected, reasons = _partial_success(response)
    expected = POISON_DAYS - len(in_range)
    result.check(response.status_code == 200, f"the {POISON_DAYS}-day request got {response.status_code}")
    result.check(rejected == expected and reasons == ({"timestamp_out_of_range": expected} if expected else {}),
                 f"rejected {rejected} {reasons}, expected {expected} timestamp_out_of_range")
    return in_range, POISON_DAYS - rejected, reasons


def _partial_success(response) -> tuple[int, dict]:
    """(rejected_spans, {reason: spans}) of an OTLP/HTTP protobuf answer; (0, {}) when it is not a 200."""
    if response.status_code != 200:
        return 0, {}
    partial = ExportTraceServiceResponse.FromString(response.content).partial_success
    reasons = {m[1]: int(m[0]) for m in re.findall(r"(\d+) span\(s\) rejected: (\w+)", partial.error_message)}
    return partial.rejected_spans, reasons


def _wait_stored(server: DrillServer, target: int, timeout: float = 30) -> tuple[float | None, list]:
    """Seconds until GET /api/v1/ingest/status counts `target` spans (None: not within `timeout`), and the
    /healthz answers other than 200 without writer_error seen meanwhile."""
    t0, bad = time.monotonic(), []
    while time.monotonic() - t0 < timeout:
        status, body = healthz(server.url)
        if status != 200 or body.get("writer_error"):
            bad.append((status, body.get("writer_error")))
        answer = requests.get(server.url + "/api/v1/ingest/status", timeout=5,
                              headers={"Authorization": f"Bearer {server.key}"})
        if answer.status_code == 200 and answer.json().get("spans_stored", 0) >= target:
            return time.monotonic() - t0, bad
        time.sleep(0.2)
    return None, bad


def slow_clients(args, server: DrillServer) -> Result:
    result = Result("slow_clients")
    server.start()
    slow = SlowClients("127.0.0.1", server.port, server.key, n=SLOW_CONNECTIONS)
    slow.open()
    try:
        time.sleep(1)
        open_before = slow.count_open()
        timings = _timed_requests(server)
        open_after = slow.count_open()
    finally:
        slow.close()
    server.stop()
    ok = sum(1 for kind in timings.values() for status, _ in kind if status == 200)
    total = sum(len(kind) for kind in timings.values())
    slowest = max(s for kind in timings.values() for _, s in kind)
    result.check(open_before >= 0.9 * SLOW_CONNECTIONS,
                 f"only {open_before} slow connections open while timing: the drill measured nothing")
    result.check(ok == total, f"{total - ok} of {total} requests not answered 200")
    result.check(slowest < SLOWEST_S, f"slowest request {slowest:.2f} s (promise: under {SLOWEST_S:g} s)")
    per_kind = "  ".join(_latency_text(name, kind) for name, kind in timings.items())
    result.line = (f"slow connections open {open_before}/{SLOW_CONNECTIONS} (at the end {open_after}; refused "
                   f"{slow.refused})  requests ok {ok}/{total}  {per_kind}")
    return result


def _latency_text(name: str, kind: list[tuple[int | None, float]]) -> str:
    ms = [s * 1000 for _, s in kind]
    ok = sum(1 for status, _ in kind if status == 200)
    return f"{name} {ok}/{len(kind)} p50 {statistics.median(ms):.0f} ms max {max(ms):.0f} ms"


def _timed_requests(server: DrillServer, timeout: float = 2.0) -> dict[str, list[tuple[int | None, float]]]:
    """(status, seconds) of TIMED_REQUESTS of each kind, interleaved, each on a new connection; after six
    unanswered in a row the rest count as unanswered (at `timeout`) so that a stalled server is not waited on."""
    kinds = {"healthz": lambda: requests.get(server.url + "/healthz", timeout=timeout),
             "login": lambda: requests.get(server.url + "/login/", timeout=timeout),
             "ingest": lambda: post_spans(requests, server.url, server.key, native_spans(), timeout=timeout)}
    timings: dict[str, list] = {name: [] for name in kinds}
    unanswered = 0
    for _ in range(TIMED_REQUESTS):
        for name, call in kinds.items():
            t = time.monotonic()
            try:
                status = call().status_code if unanswered < 6 else None
            except requests.RequestException:
                status = None
            unanswered = unanswered + 1 if status is None else 0
            timings[name].append((status, time.monotonic() - t if status is not None else timeout))
    return timings


PLANS = {  # drill -> (label, retention days, function) of each server it runs
    "kill9": [("kill9", 30, kill9)],
    "clickhouse_down": [("clickhouse_down", 30, clickhouse_down)],
    "poison": [("poison_30d", 30, partial(poison, retention_days=30)),
               ("poison_3650d", 3650, partial(poison, retention_days=3650))],
    "slow_clients": [("slow_clients", 30, slow_clients)],
}


def run(name: str, args) -> list[Result]:
    """One drill on its own server(s), its line printed; an error that stops a drill is a failed promise."""
    results = []
    for label, retention_days, drill in PLANS[name]:
        t0 = time.monotonic()
        server = DrillServer(label, retention_days=retention_days)
        result = Result(label)
        try:
            server.prepare()
            result = drill(args, server)
        except Exception as exc:  # noqa: BLE001 -- a drill that cannot finish has failed; the others still run
            result.failures.append(f"could not run: {type(exc).__name__}: {exc}")
        finally:
            server.abandon(keep=bool(result.failures))
        result.seconds = time.monotonic() - t0
        if result.failures:
            result.failures.append(f"data dir kept: {server.tmp}")
        print(f"{result.drill:<16} {'PASS' if not result.failures else 'FAIL'}  {result.line or result.failures[0]}",
              flush=True)
        results.append(result)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--drills", default=",".join(DRILLS), help="comma-separated, from: " + ", ".join(DRILLS))
    parser.add_argument("--rounds", type=int, default=3, help="kill -9 rounds (kill9)")
    parser.add_argument("--down-seconds", type=float, default=20, help="how long inserts fail (clickhouse_down)")
    args = parser.parse_args()
    names = [d.strip() for d in args.drills.split(",") if d.strip()]
    unknown = set(names) - set(DRILLS)
    if unknown or not names:
        parser.error(f"unknown drill(s) {sorted(unknown)}; choose from {', '.join(DRILLS)}")
    print(f"chaos drills {', '.join(names)}  ({time.strftime('%Y-%m-%d %H:%M %Z')})", flush=True)
    results = [r for name in names for r in run(name, args)]
    print("\nsummary")
    for r in results:
        print(f"  {r.drill:<16} {'PASS' if not r.failures else 'FAIL'}  {r.seconds:5.0f} s  {'; '.join(r.failures)}")
    return 1 if any(r.failures for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
