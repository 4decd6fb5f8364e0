"""What freshness costs a read (analysis/rollups/freshness.py): `.venv/bin/python benchmarks/bench_freshness.py`.

A busy project's last 3 hours at the rate of bench_analysis (8M attempts a day over 10 services: 333k attempts and
83k stage spans an hour), generated in ClickHouse itself on a temp data dir, then:
- the check alone, when every hour is fresh (what each page view and API call pays), for 15 min, 1 h and 24 h;
- refresh() right after new spans arrived in the current hour (the check plus materializing that hour);
- the same with 200 spans arriving every second (what a page view pays under live traffic).
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.bench_analysis import ATTEMPTS_SQL, STAGES_SQL  # noqa: E402

HOURS = 3


def spread(sql: str) -> str:
    """bench_analysis's generators spread n spans over a day: spread them over HOURS instead."""
    return sql.replace("86400000000", str(HOURS * 3600 * 1_000_000))


def median_ms(fn, repeat: int) -> tuple[float, object]:
    took, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        took.append((time.perf_counter() - t) * 1000)
    return statistics.median(took), out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attempts-per-hour", type=int, default=333_000)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    data_dir = tempfile.mkdtemp(prefix="bench-freshness-")
    os.environ.update(LATENCY_OBS_DATA_DIR=data_dir, DJANGO_SETTINGS_MODULE="latency_obs.settings",
                      CLICKHOUSE_RETENTION_DAYS="3650", LOG_LEVEL="WARNING")
    for var in ("CLICKHOUSE_URL", "DATABASE_URL", "CACHE_URL"):
        os.environ.pop(var, None)
    try:
        return run(a)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def run(a) -> int:
    import django

    django.setup()
    from django.core.management import call_command

    from analysis.rollups import freshness
    from projects.models import Project
    from store import client
    from store.migrate import migrate

    call_command("migrate", verbosity=0)
    migrate()
    Project.objects.get_or_create(id=1, defaults={"name": "bench"})
    now = datetime.now(timezone.utc)
    start = now - timedelta(hours=HOURS)
    n = a.attempts_per_hour * HOURS
    params = {"day": start.replace(tzinfo=None), "n": n, "m": n // 4}
    client.command(spread(ATTEMPTS_SQL), parameters=params)
    client.command(spread(STAGES_SQL), parameters=params)
    print(f"freshness benchmark: {n + n // 4:,} spans over the last {HOURS} h of one project (10 services)")
    t = time.perf_counter()
    first = freshness.refresh(1, now - timedelta(hours=24), now + timedelta(minutes=1))
    print(f"  first refresh, {first.materialized} stale hours materialized:   {time.perf_counter() - t:6.2f} s "
          f"({first.left} left for the minute job)")
    time.sleep(freshness.OVERLAP.total_seconds())
    freshness.refresh(1, now - timedelta(hours=24), now + timedelta(minutes=1))  # what the budget left
    for label, length in (("15 min", timedelta(minutes=15)), ("1 h", timedelta(hours=1)), ("24 h", timedelta(hours=24))):
        ms, out = median_ms(lambda: freshness.refresh(1, now - length, now + timedelta(minutes=1)), a.repeat)
        print(f"  check only, all fresh, {label:6s} window:            {ms:8.1f} ms "
              f"(materialized {out.materialized})")
    burst = {**params, "day": (now - timedelta(seconds=30)).replace(tzinfo=None), "n": 200, "m": 0}
    took, done = [], 0
    for _ in range(a.repeat):
        client.command(ATTEMPTS_SQL.replace("86400000000", "1000000"), parameters=burst)  # 200 spans in 1 s
        t = time.perf_counter()
        done += freshness.refresh(1, now - timedelta(minutes=15), now + timedelta(minutes=1)).materialized
        took.append(time.perf_counter() - t)
    print(f"  200 new spans, then refresh, {a.repeat} times back to back:  {statistics.median(took):6.2f} s median, "
          f"{max(took):.2f} s max ({done} of {a.repeat} materialized the hour; the others left it resting or, "
          f"over the budget, to the minute job)")
    Project.objects.get_or_create(id=2, defaults={"name": "quiet"})
    quiet = {**params, "day": (now - timedelta(minutes=10)).replace(tzinfo=None), "n": 250, "m": 0}
    client.command(ATTEMPTS_SQL.replace("SELECT 1,", "SELECT 2,").replace("86400000000", "300000000"),
                   parameters=quiet)  # 250 attempts over 5 minutes
    t = time.perf_counter()
    out = freshness.refresh(2, now - timedelta(minutes=15), now + timedelta(minutes=1))
    print(f"  a quiet project (250 new attempts): refresh {time.perf_counter() - t:6.2f} s "
          f"(materialized {out.materialized})")
    time.sleep(freshness.OVERLAP.total_seconds())
    ms, _ = median_ms(lambda: freshness.refresh(2, now - timedelta(minutes=15), now + timedelta(minutes=1)), a.repeat)
    print(f"  a quiet project, check only:                         {ms:8.1f} ms")
    from analysis.rollups.materialize import materialize
    ms, _ = median_ms(lambda: materialize(1, now - timedelta(minutes=5), now + timedelta(minutes=1)), a.repeat)
    print(f"  for comparison, materialize only the last 5 minutes:  {ms / 1000:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
