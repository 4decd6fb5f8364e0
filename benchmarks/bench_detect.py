"""How soon the running product has judged a burst, and how soon it stores a live incident: `make bench-detect`.

Starts `up` on a fresh data dir (a subprocess, its own minute pipeline), then:
- burst: SERVICES services x MINUTES of simulated traffic sent over real OTLP/HTTP as fast as it is taken, ending 3
  minutes before the end of sending (every 4th service healthy, the others with one injected incident of a cause
  in turn); then every service's window asked through GET /api/v1/incidents until none has a pending minute.
  Prints the seconds from the burst's last span to each service judged (median and max), against the issue's
  targets (24 services x 2 h: 3 minutes; 200 services: 15 minutes), and recall, false incidents, onset errors.
- live (--live N): N services sending in real time at the healthy 5 requests/s, one of them with an incident
  switched on after its baseline; prints the seconds from the incident's onset to it being listed by the API
  (target: 4 minutes: 3 off minutes, plus at most one).

  .venv/bin/python benchmarks/bench_detect.py [--services 24] [--minutes 120] [--rps 5] [--live 50]

--rps sets the burst's services' requests/s (the healthy preset's by default): a fleet of many small services
(`--services 200 --minutes 60 --rps 1`) is sent in the time of 24 busy ones, and the judging is per service.
"""
import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency_obs.settings")
CAUSES = ("queue_backlog", "connection_churn", "post_processing", "network_overhead", "preprocessing",
          "retry_amplification")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=24)
    parser.add_argument("--minutes", type=int, default=120)
    parser.add_argument("--rps", type=float, help="the burst's requests/s per service (default: the healthy preset's)")
    parser.add_argument("--live", type=int, default=0, help="also the live case with this many services")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for the judging")
    args = parser.parse_args()
    import django
    django.setup()
    from django.conf import settings

    from tests.live import UpProcess

    with tempfile.TemporaryDirectory(prefix="bench-detect-") as data_dir:
        # TRICKY: each simulated service also sends its app's spans as "<service>-app", so 200 services are 400 names,
        # past the default INGEST_MAX_SERVICES_PER_HOUR (200): the rest would be stored as __other__ and never judged
        limit = max(settings.INGEST_MAX_SERVICES_PER_HOUR, 2 * args.services + 10)
        up = UpProcess(Path(data_dir), LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"),
                       INGEST_MAX_SERVICES_PER_HOUR=str(limit))
        up.manage("migrate", "--noinput")
        key = up.manage("create_api_key", "--project", "bench", "--scope", "ingest,read").strip()
        up.start(timeout=120)
        try:
            burst(up, key, args.services, args.minutes, args.timeout, args.rps)
            if args.live:
                live(up, key, args.live, args.timeout)
        finally:
            up.stop()
    return 0


def burst(up, key: str, services: int, minutes: int, timeout: float, rps: float | None = None) -> None:
    from simulator.scenarios import PRESETS
    from tests.fleet import Case, score, send_burst, wait_judged

    base = PRESETS["healthy"].at_rps(rps) if rps else PRESETS["healthy"]
    cases = [Case(f"burst-{k:03d}", base, seed=100 + k, minutes=minutes,
                  incidents=() if k % 4 == 3 else (f"{CAUSES[k % len(CAUSES)]}@{minutes // 2}m+12m",))
             for k in range(services)]
    start = datetime.now(timezone.utc) - timedelta(minutes=minutes + 5)
    began = time.monotonic()
    send_burst(f"{up.url}/v1/traces", key, cases)
    sent = time.monotonic()
    end = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    took = wait_judged(up.url, key, cases, start, end, timeout)
    done = [v for v in took.values() if v is not None]
    target = 180 if services <= 24 else 900
    print(f"burst: {services} services x {minutes} min at {base.rps:g} requests/s sent in {sent - began:.0f} s")
    if done:
        print(f"  judged after the burst: median {statistics.median(done):.0f} s, max {max(done):.0f} s "
              f"(target {target} s) {'ok' if len(done) == services and max(done) <= target else 'MISSED'}")
    print(f"  still pending after {timeout:.0f} s: {services - len(done)}")
    found = score(up.url, key, cases, start, end)
    print(f"  recall {found.recall:.0%} ({found.found}/{found.injected}), false {len(found.false)}, median onset error "
          f"{found.median_onset_s:.0f} s, verdicts right {found.verdicts_right:.0%}")
    for item in found.false + found.wrong_verdicts:
        print(f"    {item}")
    if os.environ.get("KEEP"):
        print(f"  the data dir is kept: {up.data_dir}; press Enter to stop")
        input()


def live(up, key: str, services: int, timeout: float) -> None:
    from tests.fleet import Case, ask, send_burst

    onset_m = 20  # the incident's service needs 15 busy minutes of baseline first
    cases = [Case(f"live-{k:03d}", seed=300 + k, minutes=0, live=True,
                  incidents=(f"post_processing@{onset_m}m+15m",) if k == 0 else ()) for k in range(services)]
    stop = threading.Event()
    send_burst(f"{up.url}/v1/traces", key, cases, live_for=timedelta(minutes=onset_m + 12), stop=stop)
    onset = cases[0].injected[0][1]
    found_at = None
    while found_at is None and datetime.now(timezone.utc) < onset + timedelta(seconds=timeout):
        doc = ask(up.url, key, cases[0].service, onset - timedelta(minutes=30), onset + timedelta(hours=1))
        if doc["incidents"]:
            found_at = datetime.now(timezone.utc)
        time.sleep(5)
    after = (found_at - onset).total_seconds() if found_at else None
    print(f"live: {services} services at 5 requests/s, an incident after {onset_m} min")
    print(f"  listed by the API {after:.0f} s after its onset (target 240 s) {'ok' if after <= 240 else 'MISSED'}"
          if after is not None else "  not listed: MISSED")
    stop.set()


if __name__ == "__main__":
    sys.exit(main())
