"""The tools of the reliability drills (benchmarks/chaos.py): a killable `up`, OTLP senders, /healthz polls, counts.

DrillServer is tests/live.py's UpProcess on a throw-away data dir, made once per drill: start(), kill() (-9),
start() again, stop(). It runs on the product's defaults (embedded mode, CLICKHOUSE_RETENTION_DAYS 30)
unless a drill gives other variables. Counting opens the store after stop(), in a separate process,
because chDB allows one process per data dir.
"""
from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import requests
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                     ExportTraceServiceResponse)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import factories as f  # noqa: E402
from tests.live import UpProcess  # noqa: E402

DROPPED_ENV = ("DATABASE_URL", "CLICKHOUSE_URL", "CELERY_BROKER_URL", "INGEST_SPOOL_DIR")
SPANS_PER_REQUEST = 200
DAY_NS = 86_400 * 10**9
# One process sets up the store: Django tables, ClickHouse migrations, merges off, a key (its last stdout line).
# TRICKY: spans is a ReplacingMergeTree, whose background merges fold a duplicate row into its twin within
# seconds; with merges off on this throw-away store, a span stored twice stays a second physical row to count.
PREPARE = """
from django.core.management import call_command
from store import client
call_command("migrate", interactive=False, verbosity=0)
call_command("migrate_clickhouse", verbosity=0)
client.command("ALTER TABLE spans MODIFY SETTING max_bytes_to_merge_at_max_space_in_pool = 1, "
               "max_bytes_to_merge_at_min_space_in_pool = 1")
call_command("create_api_key", project="chaos", scope="ingest,read")
"""


class DrillError(Exception):
    """The drill could not run to its end (the server did not start, stop or drain)."""


def native_spans(n: int = SPANS_PER_REQUEST, start_ns: int | None = None, step_ns: int = 1_000_000) -> list:
    """n native attempt spans with fresh ids, starting a minute before now (inside any retention)."""
    start_ns = time.time_ns() - 60 * 10**9 if start_ns is None else start_ns
    return [f.attempt(tenant=f"t{i % 7}", start_ns=start_ns - i * step_ns) for i in range(n)]


def healthz(url: str, timeout: float = 2.0) -> tuple[int | None, dict]:
    """(status, JSON body) of GET /healthz; (None, {}) when there is no answer."""
    try:
        response = requests.get(url + "/healthz", timeout=timeout)
        return response.status_code, response.json()
    except (requests.RequestException, ValueError):
        return None, {}


@dataclass
class Counts:
    acknowledged: int
    stored: int  # acknowledged span ids found in the store
    lost: int  # acknowledged, not found
    duplicated: int  # physical rows - distinct span ids, over the whole table
    unacknowledged_stored: int  # stored although no 200 came back (in flight at a kill)


class DrillServer(UpProcess):
    """`manage.py up` on its own temp data dir; prepare() once, then start/kill/stop at will, then count()."""

    def __init__(self, label: str, retention_days: int = 30, **env: str):
        self.tmp = Path(tempfile.mkdtemp(prefix=f"chaos-{label}-"))
        super().__init__(self.tmp, LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1", **env)
        for name in DROPPED_ENV:  # embedded mode, whatever the shell has set
            self.env.pop(name, None)
        self.env["CLICKHOUSE_RETENTION_DAYS"] = str(retention_days)  # UpProcess sets 3650 for the tests
        self.key = ""

    def prepare(self) -> None:
        self.key = self.manage("shell", "-c", PREPARE).strip().splitlines()[-1]
        if not self.key.startswith("lo_"):
            raise DrillError(f"set-up printed {self.key!r}, expected an API key")

    def start(self, timeout: float = 120) -> None:
        try:
            super().start(timeout)
        except (RuntimeError, TimeoutError) as exc:
            raise DrillError(f"up did not start: {exc}\n{self.log_tail()}") from None

    def stop(self) -> None:
        try:
            self.kill(signal.SIGINT, timeout=120)
        except Exception:
            self.kill()
            raise DrillError(f"up did not stop within 120 s of SIGINT\n{self.log_tail()}") from None
        if self.proc is not None and self.proc.returncode != 0:
            raise DrillError(f"up exited with {self.proc.returncode} on SIGINT\n{self.log_tail()}")

    def abandon(self, keep: bool) -> None:
        """Kill `up` if it still runs; remove the data dir unless `keep` (a failed drill's evidence)."""
        if self.proc is not None and self.proc.poll() is None:
            self.kill()
        if not keep:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return (self.data_dir / "up.log").read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def log_codes(self, pattern: str) -> list[str]:
        """The first group of each match of `pattern` in the server's log (e.g. ClickHouse error codes)."""
        return re.findall(pattern, self.log_tail(chars=10**7))

    def spool_segments_on_disk(self) -> int:
        return len(list((self.data_dir / "spool").glob("*.seg")))

    def wait_drained(self, timeout: float = 120) -> float:
        """Seconds until /healthz answers 200 with an empty spool; DrillError after `timeout`."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            status, body = healthz(self.url)
            if status == 200 and body.get("spool_segments") == 0:
                return time.monotonic() - t0
            time.sleep(0.2)
        raise DrillError(f"spool not drained within {timeout:.0f} s; last /healthz {status} {body}")

    def count(self, acked: set[str]) -> Counts:
        """Open the stopped server's store and count the acknowledged span ids (hex) in it."""
        rows = self.query_json("SELECT span_id, count() FROM spans GROUP BY span_id")
        stored = {span_id: int(n) for span_id, n in rows}
        found = sum(1 for s in acked if s in stored)
        return Counts(acknowledged=len(acked), stored=found, lost=len(acked) - found,
                      duplicated=sum(stored.values()) - len(stored), unacknowledged_stored=len(stored.keys() - acked))


def post_spans(session, url: str, key: str, spans: list, timeout: float = 10) -> requests.Response:
    return session.post(url + "/v1/traces", data=f.request(*spans).SerializeToString(), timeout=timeout,
                        headers={"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"})


class Sender(threading.Thread):
    """POSTs 200 fresh native spans per request until stopped; a span counts as acknowledged only on a 200."""

    def __init__(self, url: str, key: str, stop: threading.Event):
        super().__init__(daemon=True)
        self.url, self.key, self.stop = url, key, stop
        self.acked: set[str] = set()
        self.acked_at: list[tuple[float, int]] = []  # (monotonic time, spans) of each 200
        self.answers: Counter = Counter()  # "200", "503 spool_full", "no answer", ...

    def run(self) -> None:
        session = requests.Session()
        while not self.stop.is_set():
            spans = native_spans()
            try:
                response = post_spans(session, self.url, self.key, spans)
            except requests.RequestException:
                self.answers["no answer"] += 1  # killed mid-request: never acknowledged
                self.stop.wait(0.2)
                continue
            self._record(response, spans)

    def _record(self, response: requests.Response, spans: list) -> None:
        if response.status_code != 200:
            self.answers[f"{response.status_code} {response.headers.get('X-Latency-Obs-Reason', '')}"] += 1
            self.stop.wait(1.0)  # 503/429 come with Retry-After; an exporter waits too (here a short while)
            return
        if ExportTraceServiceResponse.FromString(response.content).partial_success.rejected_spans:
            self.answers["200 with rejected spans"] += 1  # not expected of these spans: not counted as acknowledged
            return
        self.answers["200"] += 1
        self.acked.update(s.span_id.hex() for s in spans)
        self.acked_at.append((time.monotonic(), len(spans)))


class Load:
    """Several Senders against one server."""

    def __init__(self, url: str, key: str, senders: int = 3):
        self.stop_event = threading.Event()
        self.senders = [Sender(url, key, self.stop_event) for _ in range(senders)]

    def start(self) -> "Load":
        for s in self.senders:
            s.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        for s in self.senders:
            s.join(30)

    @property
    def acked(self) -> set[str]:
        return set().union(*(s.acked for s in self.senders))

    @property
    def answers(self) -> Counter:
        return sum((s.answers for s in self.senders), Counter())

    def acked_between(self, t0: float, t1: float) -> int:
        return sum(n for s in self.senders for t, n in s.acked_at if t0 <= t <= t1)


class HealthPoller(threading.Thread):
    """GET /healthz every `every` seconds: (monotonic time, status or None, spool_bytes, spool_segments)."""

    def __init__(self, url: str, every: float = 0.5):
        super().__init__(daemon=True)
        self.url, self.every = url, every
        self.polls: list[tuple[float, int | None, int, int]] = []
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            t = time.monotonic()
            status, body = healthz(self.url)
            self.polls.append((t, status, body.get("spool_bytes", 0), body.get("spool_segments", 0)))
            self._done.wait(max(0.0, self.every - (time.monotonic() - t)))

    def stop(self) -> None:
        self._done.set()
        self.join(10)

    def between(self, t0: float, t1: float) -> list[tuple[float, int | None, int, int]]:
        return [p for p in self.polls if t0 <= p[0] <= t1]


def fault_file(data_dir: Path) -> Path:
    """Where `manage.py inject_fault` writes the epoch second the fault ends (ingest/faults.py FILE)."""
    return Path(data_dir) / "fault-inserts-fail-until"


class SlowClients:
    """Connections that send the headers of POST /v1/traces with a large Content-Length, then a few body bytes,
    and afterwards one byte every `trickle_s` seconds (even-numbered ones) or nothing (odd ones)."""

    def __init__(self, host: str, port: int, key: str, n: int = 150, content_length: int = 100_000,
                 trickle_s: float = 3.0):
        self.host, self.port, self.n, self.trickle_s = host, port, n, trickle_s
        self.head = (f"POST /v1/traces HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/x-protobuf\r\n"
                     f"Authorization: Bearer {key}\r\nContent-Length: {content_length}\r\n\r\n").encode() + b"\x0a\x00"
        self.socks: list[socket.socket] = []
        self.refused = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)

    def open(self) -> None:
        for _ in range(self.n):
            try:
                sock = socket.create_connection((self.host, self.port), timeout=5)
                sock.sendall(self.head)
                sock.setblocking(False)  # count_open() peeks, the trickle never waits
                self.socks.append(sock)
            except OSError:
                self.refused += 1
        self._thread.start()

    def _trickle(self) -> None:
        while not self._done.wait(self.trickle_s):
            for sock in self.socks[::2]:
                try:
                    sock.send(b"\x00")
                except OSError:
                    pass  # closed by the server: count_open() sees it

    def count_open(self) -> int:
        """Connections the server has neither closed nor answered."""
        still = 0
        for sock in self.socks:
            try:
                sock.recv(1, socket.MSG_PEEK)  # bytes (an answer) or b"" (closed)
            except BlockingIOError:
                still += 1  # nothing to read: open and waiting
            except OSError:
                pass  # reset
        return still

    def close(self) -> None:
        self._done.set()
        self._thread.join(10)
        for sock in self.socks:
            sock.close()


# The cardinality drill (chaos.py `cardinality`): project A floods services, project B trickles one.
# A is created before B, so A has the lower id: a job that walks the projects in id order meets A's services first.
# The user `chaos` (a member of both, not staff) reads the dashboard; the last stdout line is JSON.
CARDINALITY_PREPARE = """
import json, secrets
from io import StringIO
from django.contrib.auth import get_user_model
from django.core.management import call_command
from projects.models import Project
keys = {}
for name in ("A", "B"):
    out = StringIO()
    call_command("create_api_key", project=name, scope="ingest,read", stdout=out, stderr=StringIO())
    keys[name] = out.getvalue().strip()
Project.objects.filter(name="A").update(ingest_max_services_per_hour=%(services_limit)r)
password = secrets.token_urlsafe(12)
user = get_user_model().objects.create_user("chaos", password=password)
for project in Project.objects.filter(name__in=keys):
    project.members.add(user)
print(json.dumps({"keys": keys, "user": "chaos", "password": password}))
"""
# after `up` stopped: A's services in the store, in request_buckets (materialized) and with a stored diagnosis
CARDINALITY_COUNT = """
import json
from analysis.models import WindowDiagnosis
from projects.models import Project
from store import client
a = Project.objects.get(name="A")
[(stored,)] = client.query_rows("SELECT uniqExact(service) FROM spans WHERE project_id = %d" % a.pk)
[(materialized,)] = client.query_rows("SELECT uniqExact(service) FROM request_buckets WHERE project_id = %d" % a.pk)
diagnosed = WindowDiagnosis.objects.filter(project=a).values("service").distinct().count()
print(json.dumps({"stored": int(stored), "materialized": int(materialized), "diagnosed": diagnosed}))
"""
FLOOD_SERVICE = "A-svc-{:06d}"
FOLDED_SERVICES = re.compile(r"(\d+) span\(s\) had a service past")


def prepare_cardinality(server: DrillServer, services_limit: int | None) -> dict:
    """Projects A and B with an ingest+read key each, A's services-per-hour override (None: the setting's
    default, 0: no limit) and a login member of both: {"keys": {"A": key, "B": key}, "user", "password"}."""
    out = server.manage("shell", "-c", CARDINALITY_PREPARE % {"services_limit": services_limit})
    return json.loads(out.strip().splitlines()[-1])


def count_cardinality(server: DrillServer) -> dict:
    """{"stored", "materialized", "diagnosed"}: A's distinct services in spans, in request_buckets, and with a
    stored WindowDiagnosis (the server stopped)."""
    return json.loads(server.manage("shell", "-c", CARDINALITY_COUNT).strip().splitlines()[-1])


def flood_request(first: int, n: int, start_ns: int) -> bytes:
    """One OTLP request of n resources, each its own service (A-svc-<first>, ...) holding one native attempt."""
    req = ExportTraceServiceRequest()
    for k in range(first, first + n):
        rs = req.resource_spans.add()
        rs.resource.attributes.extend([f.kv("service.name", FLOOD_SERVICE.format(k)),
                                       f.kv("service.instance.id", f"a-{k % 10}")])
        ss = rs.scope_spans.add()
        ss.scope.name = "chaos"
        ss.spans.append(f.attempt(tenant=f"t{k % 7}", start_ns=start_ns - (k % 30_000) * 1_000_000))
    return req.SerializeToString()


def login_session(url: str, username: str, password: str) -> requests.Session:
    """A requests.Session logged in through the login form (CSRF token from GET /login/)."""
    session = requests.Session()
    form = session.get(url + "/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    if token is None:
        raise DrillError(f"no CSRF token in GET /login/ ({form.status_code})")
    answer = session.post(url + "/login/", data={"username": username, "password": password,
                                                 "csrfmiddlewaretoken": token[1]},
                          headers={"Referer": url + "/login/"}, allow_redirects=False, timeout=30)
    if answer.status_code != 302:
        raise DrillError(f"login as {username} answered {answer.status_code}, expected 302")
    return session


class Flood:
    """`senders` threads POST the services FLOOD_SERVICE 0..services-1, `per_request` resources (one attempt
    each) per request; a 429 or 503 is retried after its Retry-After (at most 5 s), as an exporter would.
    The first request goes alone, so that under a services limit the first services (FLOOD_SERVICE.format(0)
    included) are the ones stored under their own name."""

    def __init__(self, url: str, key: str, services: int, per_request: int = 1000, senders: int = 4):
        self.url, self.key, self.services, self.per_request = url, key, services, per_request
        self.start_ns = time.time_ns() - 60 * 10**9
        self._next = iter(range(0, services, per_request))
        self._lock = threading.Lock()
        self._first_sent = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i == 0,), daemon=True) for i in range(senders)]
        self.acked = 0  # spans in requests answered 200
        self.folded = 0  # spans stored as __other__ (partial_success)
        self.answers: Counter = Counter()
        self.started = self.ended = 0.0  # monotonic

    def start(self) -> "Flood":
        self.started = time.monotonic()
        for t in self.threads:
            t.start()
        return self

    def join(self, until: float) -> None:
        """Wait for the senders until the monotonic time `until` at the latest."""
        for t in self.threads:
            t.join(max(0.0, until - time.monotonic()))

    @property
    def done(self) -> bool:
        return not any(t.is_alive() for t in self.threads)

    def _take(self) -> int | None:
        with self._lock:
            return next(self._next, None)

    def _run(self, leader: bool) -> None:
        session = requests.Session()
        headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {self.key}"}
        if not leader:
            self._first_sent.wait(120)
        while (first := self._take()) is not None:
            n = min(self.per_request, self.services - first)
            body = flood_request(first, n, self.start_ns)
            for _ in range(20):
                try:
                    response = session.post(self.url + "/v1/traces", data=body, headers=headers, timeout=60)
                except requests.RequestException:
                    self._count("no answer")
                    time.sleep(1)
                    continue
                if response.status_code == 200:
                    message = ExportTraceServiceResponse.FromString(response.content).partial_success.error_message
                    folded = sum(int(m) for m in FOLDED_SERVICES.findall(message))
                    self._count("200", acked=n, folded=folded)
                    break
                self._count(f"{response.status_code} {response.headers.get('X-Latency-Obs-Reason', '')}")
                time.sleep(min(5.0, float(response.headers.get("Retry-After") or 1)))
            self._first_sent.set()
        self._first_sent.set()
        with self._lock:
            self.ended = max(self.ended, time.monotonic())

    def _count(self, answer: str, acked: int = 0, folded: int = 0) -> None:
        with self._lock:
            self.answers[answer] += 1
            self.acked += acked
            self.folded += folded


class Trickle(threading.Thread):
    """`per_second` native attempts of one service, in 4 requests a second, each attempt just ended
    (queued `duration` ago); counts every answer, and when the first 200 came (monotonic)."""

    def __init__(self, url: str, key: str, service: str, per_second: int = 20, t_first_token_ms: float = 2500.0):
        super().__init__(daemon=True)
        self.url, self.key, self.service = url, key, service
        self.per_request, self.ttft = max(1, per_second // 4), t_first_token_ms
        self.first_ack: float | None = None
        self.answers: Counter = Counter()
        self._done = threading.Event()

    def run(self) -> None:
        session = requests.Session()
        headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {self.key}"}
        duration_ns = int((20 + self.ttft + 900 + 15) * 1_000_000)
        while not self._done.is_set():
            t = time.monotonic()
            now = time.time_ns()
            spans = [f.attempt(t_first_token_ms=self.ttft, tenant=f"b{i % 3}", start_ns=now - duration_ns - i * 10**6)
                     for i in range(self.per_request)]
            body = f.request(*spans, service=self.service, instance="b-1").SerializeToString()
            try:
                response = session.post(self.url + "/v1/traces", data=body, headers=headers, timeout=30)
                answer = str(response.status_code)
                if response.status_code != 200:
                    answer += " " + response.headers.get("X-Latency-Obs-Reason", "")
            except requests.RequestException:
                answer = "no answer"
            self.answers[answer] += 1
            if answer == "200" and self.first_ack is None:
                self.first_ack = time.monotonic()
            self._done.wait(max(0.0, 0.25 - (time.monotonic() - t)))

    @property
    def refused(self) -> int:
        return sum(n for answer, n in self.answers.items() if answer != "200")

    def stop(self) -> None:
        self._done.set()
        self.join(40)


class PageProber(threading.Thread):
    """A logged-in user GETs `paths` one after the other, a cycle at most every `every` seconds: (path, status or
    None, bytes, seconds, the API's error reason or "") per fetch. finish() lets the cycle under way end and then
    one more whole cycle run before it stops."""

    def __init__(self, url: str, session: requests.Session, paths: list[str], timeout: float = 60,
                 every: float = 3.0):
        super().__init__(daemon=True)
        self.url, self.session, self.paths, self.timeout, self.every = url, session, paths, timeout, every
        self.fetches: list[tuple[str, int | None, int, float, str]] = []
        self.cycles = 0
        self._finish_after: int | None = None
        self._lock = threading.Lock()
        self._abort = threading.Event()

    def run(self) -> None:
        while not self._abort.is_set():
            with self._lock:
                if self._finish_after is not None and self.cycles >= self._finish_after:
                    return
            began = time.monotonic()
            for path in self.paths:
                if self._abort.is_set():
                    return
                t = time.monotonic()
                try:
                    response = self.session.get(self.url + path, timeout=self.timeout)
                    fetch = (path, response.status_code, len(response.content), time.monotonic() - t,
                             _reason(response))
                except requests.RequestException:
                    fetch = (path, None, 0, time.monotonic() - t, "no answer")
                self.fetches.append(fetch)
            with self._lock:
                self.cycles += 1
            self._abort.wait(max(0.0, self.every - (time.monotonic() - began)))

    def finish(self, timeout: float = 600) -> None:
        with self._lock:
            self._finish_after = self.cycles + 2  # the cycle under way, then a whole one
        self.join(timeout)

    def abort(self) -> None:
        """Stop before the next fetch (a fetch under way still ends or times out, in the background)."""
        self._abort.set()
        self.join(1)


def _reason(response: requests.Response) -> str:
    """The `error` of an API answer's JSON body ({"error": reason, ...}), else ""."""
    if response.status_code == 200 or "json" not in response.headers.get("Content-Type", ""):
        return ""
    try:
        return str(response.json().get("error", ""))
    except ValueError:
        return ""
