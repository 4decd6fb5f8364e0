"""The tools of the reliability drills (benchmarks/chaos.py): a killable `up`, OTLP senders, /healthz polls, counts.

DrillServer is tests/live.py's UpProcess on a throw-away data dir, made once per drill: start(), kill() (-9),
start() again, stop(). It runs on the product's defaults (embedded mode, CLICKHOUSE_RETENTION_DAYS 30)
unless a drill gives other variables. Counting opens the store after stop(), in a separate process,
because chDB allows one process per data dir.
"""
from __future__ import annotations

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
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

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
