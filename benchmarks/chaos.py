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
  cardinality      project A sends 100,000 native attempts, one per service (1000 services per request, 4
                   requests at a time) while project B sends 20 attempts a second of one service with a 2.5 s
                   TTFT; meanwhile a logged-in member fetches A's Overview, Diagnosis, Tenants, Scheduler and Runs
                   pages and GET /api/v1/diagnosis of one of A's services, over and over. Run twice: A under the
                   default services-per-hour limit (all but 200 services stored as __other__), then with A's
                   limit off (0: 100,000 services reach the minute jobs). Promise: GET /api/v1/diagnosis of B's
                   service answers 200 within 120 s of B's first acknowledged spans (materialized: diagnosable),
                   B's Overview shows the minute job's stored verdict within 180 s (the job runs every 60 s on a
                   window ending at a whole minute, so up to two runs may pass) and a later window's within 90 s
                   after that (the next run); every page 200 (the API's 404 unknown_service for A's service
                   before its first materialization aside), under 1 MB and 5 s; no request of B refused. After
                   `up` stopped, A's services are counted in the store, materialized and with a stored diagnosis.

A span counts as acknowledged only when its request got a 200 without rejected spans. After `up` is stopped its
store is opened: stored = acknowledged span ids found, lost = acknowledged and not found, duplicated = rows -
distinct span ids (background merges are switched off on these stores, or they would fold a duplicate away).
Each drill starts its own `up` on its own temp data dir (benchmarks/chaos_kit.py); a failed drill keeps it and
prints where. One line of counts per drill, then a summary; exit status 1 when a promise failed.

    .venv/bin/python benchmarks/chaos.py [--drills kill9,clickhouse_down,poison,slow_clients,cardinality]
        [--rounds 3] [--down-seconds 20] [--services 100000]
"""
from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import partial

import requests
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from chaos_kit import (DAY_NS, FLOOD_SERVICE, DrillError, DrillServer, Flood, HealthPoller, Load, PageProber,
                       SlowClients, Trickle, count_cardinality, fault_file, healthz, login_session, native_spans,
                       post_spans, prepare_cardinality)

DRILLS = ("kill9", "clickhouse_down", "poison", "slow_clients", "cardinality")
HEALTH_GRACE_S = 2.0  # the writer notices a failing INSERT at its next flush, a second or so after
LATER_SPANS_DEADLINE_S = 10.0
POISON_DAYS = 101
SLOW_CONNECTIONS, TIMED_REQUESTS, SLOWEST_S = 150, 20, 1.0
VICTIM_SERVICE = "B-svc"
DIAGNOSABLE_S, STORED_DIAGNOSIS_S = 120.0, 180.0  # after B's first acknowledged spans
PAGE_MAX_BYTES, PAGE_MAX_S = 1_000_000, 5.0
REFRESH_S = 90.0  # after B's first stored verdict, the next minute job's (60 s later) stores a later window
MINUTE_JOB_S = 70.0  # a minute job starts within 60 s after the flood's last span and materializes it first


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


def cardinality(args, server: DrillServer, services_limit: int | None) -> Result:
    """A floods args.services services (services_limit: A's override, None = the default), B trickles."""
    result = Result("cardinality_off" if services_limit == 0 else "cardinality")
    setup = prepare_cardinality(server, services_limit)
    keys = setup["keys"]
    server.start()
    now = datetime.now(timezone.utc)
    window = f"start={_iso(now - timedelta(minutes=30))}&end={_iso(now + timedelta(minutes=30))}"
    pages = ["/?project=A", "/diagnosis/?project=A", "/tenants/?project=A", "/scheduler/?project=A",
             "/runs/?project=A", f"/api/v1/diagnosis?project=A&service={FLOOD_SERVICE.format(0)}&{window}"]
    overview_b = login_session(server.url, setup["user"], setup["password"])
    prober = PageProber(server.url, login_session(server.url, setup["user"], setup["password"]), pages)
    trickle, flood = Trickle(server.url, keys["B"], VICTIM_SERVICE), Flood(server.url, keys["A"], args.services)
    trickle.start()
    flood.start()
    prober.start()
    try:
        waited = _wait_diagnosed(server, keys["B"], overview_b, trickle, window)
        flood.join(until=trickle.first_ack + STORED_DIAGNOSIS_S)
        # the pages once the flood is materialized, but not past the observation time when a job is stuck
        if flood.done:
            time.sleep(max(0.0, min(flood.ended + MINUTE_JOB_S, trickle.first_ack + STORED_DIAGNOSIS_S)
                           - time.monotonic()))
        prober.finish()
    finally:
        trickle.stop()
        prober.abort()
    server.stop()
    _judge_cardinality(result, flood, trickle, prober, waited, count_cardinality(server), args.services)
    return result


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Waited:
    """Seconds after B's first acknowledged spans (None: not seen while the drill watched)."""
    diagnosable: float | None = None  # GET /api/v1/diagnosis of B's service answered 200
    stored: float | None = None  # B's Overview showed a stored verdict (the minute job's)
    refreshed: float | None = None  # ... and then a later window's (the next minute job's)
    verdict: str = "-"


# B's row of the Overview's verdict table: the verdict's link, then the diagnosed window
STORED_VERDICT = re.compile(r'class="verdict (\w+)".*?<td>([^<]*UTC)</td>', re.S)


def _wait_diagnosed(server: DrillServer, key: str, session, trickle: Trickle, window: str) -> Waited:
    """Poll B's diagnosis (API, with B's key) and B's Overview (logged in) every second or so: until B is
    diagnosable, has a stored verdict and then a stored verdict of a later window, or for at most
    STORED_DIAGNOSIS_S (the first two) and REFRESH_S after the first stored verdict (the third)."""
    t0 = time.monotonic()
    while trickle.first_ack is None:
        if time.monotonic() - t0 > 30:
            raise DrillError(f"B's spans not acknowledged within 30 s: {dict(trickle.answers)}")
        time.sleep(0.1)
    waited, first_window = Waited(), None
    api = f"{server.url}/api/v1/diagnosis?service={VICTIM_SERVICE}&{window}"
    while True:
        elapsed = time.monotonic() - trickle.first_ack
        if waited.refreshed is not None or (waited.stored is None and elapsed > STORED_DIAGNOSIS_S) or \
                (waited.stored is not None and elapsed > waited.stored + REFRESH_S):
            return waited
        if waited.diagnosable is None and elapsed <= STORED_DIAGNOSIS_S:
            try:
                answer = requests.get(api, headers={"Authorization": f"Bearer {key}"}, timeout=60)
                if answer.status_code == 200:
                    waited.diagnosable = time.monotonic() - trickle.first_ack
            except requests.RequestException:
                pass
        try:
            page = session.get(server.url + "/?project=B", timeout=60)
            found = STORED_VERDICT.search(page.text) if page.status_code == 200 else None
        except requests.RequestException:
            found = None
        if found and first_window is None:
            waited.stored, waited.verdict, first_window = time.monotonic() - trickle.first_ack, found[1], found[2]
        elif found and found[2] != first_window:
            waited.refreshed = time.monotonic() - trickle.first_ack
        time.sleep(1.0)


def _judge_cardinality(result: Result, flood: Flood, trickle: Trickle, prober: PageProber, waited: Waited,
                       counts: dict, services: int) -> None:
    fetches = prober.fetches
    # the API answers 404 unknown_service for A's service until the first minute job has materialized it
    not_yet = sum(1 for _, status, _, _, reason in fetches if status == 404 and reason == "unknown_service")
    bad = [(_short(p), status, reason) for p, status, _, _, reason in fetches
           if status != 200 and not (status == 404 and reason == "unknown_service")]
    largest = max(fetches, key=lambda x: x[2], default=("-", None, 0, 0.0, ""))
    slowest = max(fetches, key=lambda x: x[3], default=("-", None, 0, 0.0, ""))
    refused = trickle.refused
    result.check(flood.acked == services, f"A: {flood.acked} of {services} spans acknowledged")
    result.check(waited.diagnosable is not None and waited.diagnosable <= DIAGNOSABLE_S,
                 f"B diagnosable after {_seconds(waited.diagnosable)} (promise: {DIAGNOSABLE_S:g} s)")
    result.check(waited.stored is not None and waited.stored <= STORED_DIAGNOSIS_S,
                 f"B's stored verdict after {_seconds(waited.stored)} (promise: {STORED_DIAGNOSIS_S:g} s)")
    result.check(waited.stored is None or waited.refreshed is not None,
                 f"B's stored verdict not refreshed within {REFRESH_S:g} s")
    result.check(not bad, f"{len(bad)} of {len(fetches)} page fetches not 200: "
                          f"{dict(Counter(f'{p} {s} {r}'.strip() for p, s, r in bad))}")
    result.check(largest[2] < PAGE_MAX_BYTES, f"page {_short(largest[0])} {largest[2] / 1000:.0f} KB (promise: under "
                                               f"{PAGE_MAX_BYTES / 1000:.0f} KB)")
    result.check(slowest[3] < PAGE_MAX_S, f"page {_short(slowest[0])} took {slowest[3]:.1f} s (promise: under "
                                          f"{PAGE_MAX_S:g} s)")
    result.check(refused == 0, f"B refused {refused} time(s): {dict(trickle.answers)}")
    other = {k: v for k, v in flood.answers.items() if k != "200"}
    refreshed = (f", refreshed after {_seconds(waited.refreshed)}" if waited.refreshed is not None
                 else f", not refreshed within {REFRESH_S:g} s" if waited.stored is not None else "")
    result.line = (f"services sent {services}  folded {flood.folded}  B diagnosable after "
                   f"{_seconds(waited.diagnosable)} (limit {DIAGNOSABLE_S:g} s), stored verdict {waited.verdict} after "
                   f"{_seconds(waited.stored)} (limit {STORED_DIAGNOSIS_S:g} s){refreshed}  largest page "
                   f"{largest[2] / 1000:.0f} KB in {largest[3] * 1000:.0f} ms ({_short(largest[0])})  slowest "
                   f"{slowest[3] * 1000:.0f} ms ({_short(slowest[0])})  pages ok {len(fetches) - len(bad)}/"
                   f"{len(fetches)}  B refused {refused}/{sum(trickle.answers.values())}  "
                   f"(A's services stored {counts['stored']}, materialized {counts['materialized']}, diagnosed "
                   f"{counts['diagnosed']}; flood sent in "
                   f"{f'{flood.ended - flood.started:.0f} s' if flood.done else 'unfinished'}, A's answers other "
                   f"than 200: {other or 'none'}; per page, largest and slowest: {_per_page(fetches)}; A's API 404 "
                   f"unknown_service before materialized: {not_yet})")


def _per_page(fetches) -> str:
    worst: dict[str, tuple[int, float]] = {}
    for path, _, size, seconds, _ in fetches:
        size0, seconds0 = worst.get(_short(path), (0, 0.0))
        worst[_short(path)] = (max(size0, size), max(seconds0, seconds))
    return ", ".join(f"{p.split('?')[0]} {b / 1000:.0f} KB {s * 1000:.0f} ms" for p, (b, s) in worst.items())


def _short(path: str) -> str:
    return path.split("&start=")[0]


PLANS = {  # drill -> (label, retention days, function) of each server it runs
    "kill9": [("kill9", 30, kill9)],
    "clickhouse_down": [("clickhouse_down", 30, clickhouse_down)],
    "poison": [("poison_30d", 30, partial(poison, retention_days=30)),
               ("poison_3650d", 3650, partial(poison, retention_days=3650))],
    "slow_clients": [("slow_clients", 30, slow_clients)],
    "cardinality": [("cardinality", 30, partial(cardinality, services_limit=None)),
                    ("cardinality_off", 30, partial(cardinality, services_limit=0))],
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
    parser.add_argument("--services", type=int, default=100_000, help="services project A sends (cardinality)")
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
