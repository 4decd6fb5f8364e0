"""Incidents judged the way users meet them: a running `up` (a subprocess with its own minute pipeline), a fleet's
traffic sent over real OTLP/HTTP in one burst that ends 3 minutes before asking, two of its services going on live,
and only the HTTP API asked (tests/fleet.py). Nothing calls the incidents step directly.

The issue's bar: every service judged within 3 minutes of the burst, recall >= 90 %, no false incident, median onset
error <= 120 s, verdicts >= 90 %; asked again a few minutes later, the same incidents under the same ids. Shapes and
seeds are this test's own (the accuracy test's cases start at 22 m; these elsewhere).
"""
import re
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from simulator.scenarios import PRESETS
from tests.fleet import ONSET_S, Case, _iso, ask, score, send_burst, wait_judged
from tests.live import UpProcess, logged_in

pytestmark = pytest.mark.slow
HEALTHY, SLOWER = PRESETS["healthy"], PRESETS["healthy"].with_(rps=2.0)
# the past traffic (137 MB of OTLP) at this steady rate, ~90 s, whatever the machine's load when it was kept: at the
# pace of its generating during a cold make test it took 245 s, the `up` idle at a load of 0.5 (2026-11-30)
BURST_BYTES_PER_S = 1.5e6
CASES = [
    Case("q-backlog", incidents=("queue_backlog@19m+12m",), seed=21, live=True),
    Case("q-churn", incidents=("connection_churn@26m+10m",), seed=22),
    Case("q-decode", SLOWER, incidents=("decode_throughput@24m+14m",), seed=23),
    Case("q-post", incidents=("post_processing@21m+11m",), seed=24),
    Case("q-net-tenant", incidents=("network_overhead@23m+12m:tenant=acme",), seed=25),
    Case("q-prep-route", incidents=("preprocessing@25m+12m:route=/v1/summarize",), seed=26),
    Case("q-two", incidents=("network_overhead@18m+9m", "post_processing@35m+9m"), seed=27, minutes=50),
    Case("q-both", incidents=("network_overhead@24m+12m", "post_processing@24m+12m"), seed=28),
    Case("q-retry", incidents=("retry_amplification@22m+12m",), seed=29),
    Case("q-steady-slow", PRESETS["steady_slow"], seed=30),
    Case("q-healthy", seed=31),
    Case("q-healthy-live", seed=32, live=True),
]


def test_a_burst_is_judged_whole_through_the_running_product(tmp_path):
    # the product before the suite's other work (nice -5 where allowed, as root in CI): the bar is the product's on the
    # 2-core machine, and beside two other lanes of tests a live service was once still judging at 240 s; at -5 from
    # its worker's +5 (0, level with the client tests' lane) a live one took over 180 s in CI. Its
    # background threads at its own priority (BACKGROUND_NICE=0): at +10 below it (+5) they ran below the other lanes,
    # and a cold run (the traffic cache generated beside it) saw no minute job finish in 3 minutes
    up = UpProcess(tmp_path, nice=-5, LOG_LEVEL="WARNING", BACKGROUND_NICE="0")
    up.manage("migrate", "--noinput")
    up.manage("ensure_demo_login")  # the admin login and an ingest+read key of the project "demo", as `make run`
    key = (tmp_path / "demo_key").read_text()
    up.start()
    stop = threading.Event()
    try:
        start = datetime.now(timezone.utc) - timedelta(minutes=60)
        began = time.monotonic()
        live = send_burst(f"{up.url}/v1/traces", key, CASES, live_for=timedelta(minutes=8), stop=stop,
                          bytes_per_s=BURST_BYTES_PER_S)
        sent = datetime.now(timezone.utc)
        # the burst's window: every case's traffic before the moment it was sent; live ones go on after it
        end = sent.replace(second=0, microsecond=0)
        burst_s = round(time.monotonic() - began)
        took = wait_judged(up.url, key, CASES, start, end, timeout_s=240)
        print(f"\n[as run] burst sent in {burst_s} s, judged after it in {max(took.values(), key=lambda v: v or 1e9)} s:"
              f" {took}", file=sys.stderr)
        late = {c.service: {k: v for k, v in ask(up.url, key, c.service, start, end).items() if k != "incidents"}
                for c in CASES if took[c.service] is None}  # what a service not judged in time says of itself
        over = {s: v for s, v in took.items() if v is None or v > 180}  # named in full (pytest cuts a long dict)
        assert not over, (over, late, end, max((v for v in took.values() if v is not None), default=None))
        first = score(up.url, key, CASES, start, end)
        report = {**first.summary(), "took_s": took}
        assert first.recall >= 0.9, report
        assert not first.false, report
        assert first.median_onset_s <= ONSET_S, report
        assert first.verdicts_right >= 0.9, report
        # later (the live services still sending, the minute job judging their minutes): the same incidents, same ids
        wait_for_a_minute_job(up.url, key, datetime.now(timezone.utc), live)
        again = score(up.url, key, CASES, start, end)
        assert again.ids == first.ids, (first.ids, again.ids)
        for case in CASES:  # an empty list is "none" only for a window judged to its end
            doc = ask(up.url, key, case.service, start, end)
            assert doc["pending"] == 0 and doc["judged_until"] == doc["end"], (case.service, doc["pending"])
        # the Overview, the team's home, lists every one of them, each linked to its page
        page = logged_in(up.url, "admin", (tmp_path / "demo_password").read_text()).get(
            f"{up.url}/", params={"project": "demo", "start": _iso(start), "end": _iso(end + timedelta(minutes=1))},
            timeout=60)
        listed = set(re.findall(r'<li data-incident="(\d+)"><a href="/incidents/(\d+)/', page.text))
        expected = {str(i) for ids in again.ids.values() for i in ids}
        assert {a for a, b in listed if a == b} == expected, (sorted(listed), sorted(expected))
    finally:
        stop.set()
        up.stop()


def wait_for_a_minute_job(url: str, key: str, after: datetime, senders: list, timeout_s: float = 180) -> None:
    """Until a run of the minute job that began after `after` has judged a live service's minute (instead of a fixed
    sleep of 75 s, the minute job's period and some): the minute of `after` judged (judged_until past it) means a
    run after that minute's end. Only while the live services still send (a minute with traffic is judged only by
    a run); with their senders done, the fixed wait."""
    live = next(c for c in CASES if c.live)
    mark = after.replace(second=0, microsecond=0)
    deadline = time.monotonic() + timeout_s
    while True:
        doc = ask(url, key, live.service, mark - timedelta(minutes=5), mark + timedelta(minutes=30))
        if datetime.fromisoformat(doc["judged_until"].replace("Z", "+00:00")) > mark:
            break
        assert time.monotonic() < deadline, ("no minute job judged a minute after", mark, doc["judged_until"])
        time.sleep(2)
    if not all(t.is_alive() for t in senders):  # the minute may have had no traffic: judged_until says nothing then
        time.sleep(max(0.0, 75 - (datetime.now(timezone.utc) - after).total_seconds()))
