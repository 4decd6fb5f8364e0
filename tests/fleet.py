"""A fleet of simulated services with injected incidents, sent over real OTLP/HTTP to a running product in one
burst, and the product's incidents API judged against what was injected: the incidents issue's end-to-end check,
shared by tests/analysis/test_incidents_as_run.py and benchmarks/bench_detect.py.
"""
import statistics
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import requests
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from simulator.emit import Emitter, make_exporter
from simulator.incidents import check_incidents, parse_incident
from simulator.runner import run_simulation
from simulator.scenarios import PRESETS, Scenario
from tests.simulated import generated

ONSET_S = 120  # the median onset error
MATCH_S = 600  # a found incident this near an injected onset is that one


@dataclass
class Case:
    """One service: its base scenario, the incidents injected into it ("cause@start+duration[:dim=value]"), and
    whether its traffic goes on live after the burst (then the burst reaches now, and the sender keeps going)."""
    service: str
    base: Scenario = PRESETS["healthy"]
    incidents: tuple = ()
    seed: int = 1
    minutes: int = 45
    live: bool = False
    injected: list = field(default_factory=list)  # [(spec, onset, end)], filled by send_burst


def send_burst(endpoint: str, key: str, cases: list[Case], ends_before: timedelta = timedelta(minutes=3),
               live_for: timedelta = timedelta(0), stop: threading.Event | None = None,
               bytes_per_s: float | None = None) -> list[threading.Thread]:
    """Send every case's traffic as fast as the product takes it, its simulated time ending `ends_before` now (a
    live case's ending now, then going on in real time for `live_for` in a thread, returned; `stop` ends them
    early). Fills case.injected with each incident's real onset and end. bytes_per_s: the past traffic's kept bodies
    at that steady rate instead of the pace they were generated at (_send_past)."""
    now = time.time_ns()
    threads = []
    for case in cases:
        seconds = case.minutes * 60.0  # the part in the past
        total = seconds + (live_for.total_seconds() if case.live else 0.0)
        specs = [parse_incident(text.format(service=case.service)) for text in case.incidents]
        check_incidents(specs, case.base, total, case.service)
        base_ns = now - int(seconds * 1e9) - (0 if case.live else int(ends_before.total_seconds() * 1e9))
        start = datetime.fromtimestamp(base_ns / 1e9, timezone.utc)
        case.injected = [(s, start + timedelta(seconds=s.start_s), start + timedelta(seconds=s.end_s)) for s in specs]
        if case.live:  # the past at once (each run's end has passed), then in real time
            emitter = _emitter(make_exporter(endpoint, key, "http"), case, base_ns)

            def run(case=case, emitter=emitter, total=total, specs=specs):
                run_simulation(emitter, case.base, total, case.seed, case.service, live=True, incidents=specs,
                               stop=stop)
                emitter.close()
            threads.append(threading.Thread(target=run, daemon=True))
            threads[-1].start()
        else:
            _send_past(endpoint, key, case, total, specs, base_ns, bytes_per_s)
    return threads


def _emitter(exporter, case: Case, base_ns: int) -> Emitter:
    """The case's spans through the SDK's own Tracer (the burst's pace: _send_past)."""
    return Emitter(exporter, base_ns, seed=case.seed, cap=case.base.cap, sdk_tracers=True)


class _Tee(SpanExporter):
    """The HTTP exporter's export, with each body and the instant it was sent (seconds since the tee was made, just
    before the generating began) kept."""

    def __init__(self, exporter):
        self.exporter, self.bodies, self.offsets, self.began = exporter, [], [], time.monotonic()

    def export(self, spans) -> SpanExportResult:
        self.bodies.append(encode_spans(spans).SerializeToString())
        self.offsets.append(time.monotonic() - self.began)
        return self.exporter.export(spans)

    def shutdown(self) -> None:
        self.exporter.shutdown()


def _send_past(endpoint: str, key: str, case: Case, total: float, specs: list, base_ns: int,
               bytes_per_s: float | None = None) -> None:
    """A case's traffic, all past: the first time on this machine and code generated through the SDK's own Tracer
    and sent as it is made; after, its kept bodies (tests/simulated.py's traffic cache, timestamps moved to
    base_ns) sent at the instants they were sent then, or at a steady bytes_per_s. The pace they were sent at is the
    SDK's as generated then: bench_detect's figures were measured at it (QuickTracer's faster burst left more to judge
    after it: 150-207 s at load 2-3), and it is as slow as the machine was busy when they were kept (245 s for the
    as-run test's 137 MB kept during a cold make test, 2026-11-30, its `up` idle at a load of 0.5 sending them
    alone); only the generating's CPU (most of the test's own) is saved."""
    made = []

    def make():
        tee = _Tee(make_exporter(endpoint, key, "http"))
        emitter = _emitter(tee, case, base_ns)
        run_simulation(emitter, case.base, total, case.seed, case.service, incidents=specs)
        emitter.close()
        made.append(True)
        return tee.bodies, [], tee.offsets

    bodies, _, offsets = generated(("fleet burst", case.base, total, tuple(specs), case.seed, case.service), base_ns,
                                   make)
    if made:
        return
    began, sent = time.monotonic(), 0
    with requests.Session() as session:
        for body, offset in zip(bodies, offsets):
            due = offset if bytes_per_s is None else sent / bytes_per_s
            time.sleep(max(0.0, began + due - time.monotonic()))
            post_otlp(session, endpoint, key, body)
            sent += len(body)


def post_otlp(session: requests.Session, endpoint: str, key: str, body: bytes) -> None:
    """One OTLP/HTTP protobuf body, sent again after a 429 or 503 as an OTLP exporter does (Retry-After)."""
    for _ in range(60):
        response = session.post(endpoint, data=body, timeout=60, headers={
            "Authorization": f"Bearer {key}", "Content-Type": "application/x-protobuf"})
        if response.status_code not in (429, 503):
            response.raise_for_status()
            return
        time.sleep(float(response.headers.get("Retry-After") or 1))
    response.raise_for_status()


def ask(base_url: str, key: str, service: str, start: datetime, end: datetime) -> dict:
    """GET /api/v1/incidents of one service and window."""
    response = requests.get(f"{base_url}/api/v1/incidents", headers={"Authorization": f"Bearer {key}"}, timeout=60,
                            params={"service": service, "start": _iso(start), "end": _iso(end)})
    response.raise_for_status()
    return response.json()


def wait_judged(base_url: str, key: str, cases: list[Case], start: datetime, end: datetime,
                timeout_s: float) -> dict[str, float | None]:
    """Ask every service's window [start, end) until none has pending minutes; service -> seconds it took (None:
    still pending at timeout_s). A live service's window ends at `end` too: minutes after it do not count. A service
    still unknown (its spans accepted, not yet written) is asked again."""
    began, took = time.monotonic(), {c.service: None for c in cases}
    while time.monotonic() - began < timeout_s and any(v is None for v in took.values()):
        for case in cases:
            if took[case.service] is None:
                try:
                    doc = ask(base_url, key, case.service, start, end)
                except requests.HTTPError as exc:  # 404 unknown_service: its spans are accepted, not yet stored
                    if exc.response.status_code != 404:
                        raise
                    continue
                if doc["pending"] == 0 and doc["judged_until"] == _iso(end):
                    took[case.service] = round(time.monotonic() - began, 1)
        time.sleep(2)
    return took


@dataclass
class Score:
    injected: int = 0
    found: int = 0
    false: list = field(default_factory=list)
    onset_errors: list = field(default_factory=list)
    wrong_verdicts: list = field(default_factory=list)
    ids: dict = field(default_factory=dict)  # service -> ids found, in order

    @property
    def recall(self) -> float:
        return self.found / self.injected if self.injected else 1.0

    @property
    def median_onset_s(self) -> float:
        return statistics.median(self.onset_errors) if self.onset_errors else 0.0

    @property
    def verdicts_right(self) -> float:
        return 1 - len(self.wrong_verdicts) / self.found if self.found else 1.0

    def summary(self) -> dict:
        return {"found": f"{self.found}/{self.injected}", "false": self.false, "onset_errors_s": self.onset_errors,
                "wrong_verdicts": self.wrong_verdicts}


def score(base_url: str, key: str, cases: list[Case], start: datetime, end: datetime) -> Score:
    """Each injected incident found once near its onset (MATCH_S) with its cause as the verdict (two causes switched on
    together are one incident, and either is right); any other incident is false."""
    out = Score()
    for case in cases:
        found = ask(base_url, key, case.service, start, end)["incidents"]
        out.ids[case.service] = [i["id"] for i in found]
        left = list(found)
        groups: dict[datetime, set] = {}  # two causes switched on together are one incident
        for spec, onset, _ in case.injected:
            groups.setdefault(onset, set()).add(spec.cause)
        out.injected += len(groups)
        for onset, together in groups.items():
            near = [i for i in left if abs((_at(i["start"]) - onset).total_seconds()) <= MATCH_S]
            if not near:
                continue
            hit = min(near, key=lambda i: abs((_at(i["start"]) - onset).total_seconds()))
            left.remove(hit)
            out.found += 1
            out.onset_errors.append(abs((_at(hit["start"]) - onset).total_seconds()))
            if hit["verdict"] not in together:
                out.wrong_verdicts.append((case.service, sorted(together), hit["verdict"]))
        out.false += [(case.service, i["start"], i["verdict"]) for i in left]
    return out


def _iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
