"""How cost grows with stored data and with the window: `make bench-scale`.

    make bench-scale                                   (1M, 10M and 30M spans; about 20 minutes)
    .venv/bin/python benchmarks/bench_scale.py [--sizes 1000000,10000000] [--repeat 5]

For each size, on its own temp data dir (embedded chDB, temp SQLite): bench_analysis's generator spreads the
spans over 7 days (10 services, 4 attempt spans : 1 stage span; the larger sizes are the higher rates), then
materializes and merges them like a backfill. It then times, for windows of 1 h, 24 h and 7 d ending at the
latest data, the server-side time of the main pages (Django test Client, whole middleware stack) and of
GET /api/v1/diagnosis, as p95 over --repeat requests after 2 warm-ups (bench_ui.measure: caches cleared each time).

The table at the end puts the sizes side by side per page and window. The goal (issue 14): a page's time
grows with the window's length in minutes, not with the number of stored spans: across a row the figures
stay flat, down a page's three windows they may grow.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from bench_analysis import ATTEMPTS_SQL, DAY, ROOT, STAGES_SQL, timed

DAYS = 7
WINDOWS = (("1h", timedelta(hours=1)), ("24h", timedelta(hours=24)), ("7d", timedelta(days=DAYS)))
PAGES = ("overview", "diagnosis-page", "scheduler", "tenants", "connections", "prompts", "runs", "incidents", "engine")
API = "api/v1/diagnosis"


def over_days(sql: str) -> str:
    """bench_analysis's generator spread over DAYS days instead of one (as bench_freshness does for hours)."""
    return sql.replace("86400000000", str(DAYS * 86400 * 1_000_000))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default=os.environ.get("BENCH_SIZES", "1000000,10000000,30000000"))
    p.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", 5)))
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    table = {}
    for size in sizes:
        # one process per size: chDB allows one data dir per process
        data_dir = tempfile.mkdtemp(prefix=f"bench-scale-{size}-")
        try:
            table[size] = one_size(size, data_dir, a.repeat)
        finally:
            shutil.rmtree(data_dir, ignore_errors=True)
    report(sizes, table)
    return 0


def one_size(size: int, data_dir: str, repeat: int) -> dict:
    """Runs this file again in a child process for `size` spans; returns {(page, window): p95 ms}."""
    import json
    import subprocess

    out = result_file(data_dir)
    subprocess.run([sys.executable, __file__, "--child", str(size), data_dir, str(repeat)], check=True)
    return {tuple(k.split("|")): v for k, v in json.loads(out.read_text()).items()}


def result_file(data_dir: str) -> Path:
    return Path(data_dir) / "scale.json"


def child(size: int, data_dir: str, repeat: int) -> None:
    import json

    os.environ.update(LATENCY_OBS_DATA_DIR=data_dir, DJANGO_SETTINGS_MODULE="latency_obs.settings",
                      CLICKHOUSE_RETENTION_DAYS="3650", LOG_LEVEL="WARNING", ALLOWED_HOSTS="testserver")
    for var in ("CLICKHOUSE_URL", "DATABASE_URL", "DEBUG"):
        os.environ.pop(var, None)
    sys.path.insert(0, str(ROOT))
    import logging

    import django

    django.setup()
    logging.getLogger("django.request").setLevel(logging.CRITICAL)
    from bench_ui import Attribution, facts, measure, setup_project
    from django.test import Client
    from django.urls import NoReverseMatch, reverse

    from analysis.windows import iso

    project, user = setup_project()
    generate(size)
    f = facts(project.pk)
    print(f"  rows: " + ", ".join(f"{k} {v:,}" for k, v in f["counts"].items()), flush=True)
    attribution, client = Attribution(), Client()
    client.force_login(user)
    figures = {}
    for page in PAGES + (API,):
        try:
            path = "/" + API if page == API else reverse(page)
        except NoReverseMatch:
            continue  # a page this checkout does not have yet
        for window, length in WINDOWS:
            params = {"start": iso(f["end"] - length), "end": iso(f["end"]), "service": f["service"]}
            if page == API:
                params["project"] = project.name
            r = measure(client, attribution, path, params, repeat)
            figures[f"{page}|{window}"] = r["p95"] if r["status"].startswith("2") else None
            print(f"  {page:18s} {window:4s} p95 {r['p95']:8.1f} ms  status {r['status'][:40]}", flush=True)
    result_file(data_dir).write_text(json.dumps(figures))


def generate(size: int) -> None:
    from analysis.rollups.materialize import materialize
    from store import client

    attempts = size * 4 // 5
    params = {"day": DAY.replace(tzinfo=None), "n": attempts, "m": size - attempts}
    print(f"\nscale benchmark: {size:,} spans over {DAYS} days, 10 services "
          f"(data: {os.environ['LATENCY_OBS_DATA_DIR']})", flush=True)
    timed("generate attempt spans", client.command, over_days(ATTEMPTS_SQL), parameters=params)
    timed("generate stage spans", client.command, over_days(STAGES_SQL), parameters=params)
    timed(f"materialize {DAYS} days (backfill)", materialize, 1, DAY, DAY + timedelta(days=DAYS))
    timed("merge parts (OPTIMIZE TABLE request_buckets FINAL)", client.command, "OPTIMIZE TABLE request_buckets FINAL")


def report(sizes: list[int], table: dict) -> None:
    keys = [(page, window) for page in PAGES + (API,) for window, _ in WINDOWS
            if any((page, window) in table[s] for s in sizes)]
    print(f"\np95 server-side ms by stored spans ({DAYS} days of data; 10 services; the window ends at the latest data)")
    head = f"  {'page':18s} {'window':6s} " + " ".join(f"{millions(s):>9s}" for s in sizes)
    print(head + "\n  " + "-" * (len(head) - 2))
    for page, window in keys:
        cells = [table[s].get((page, window)) for s in sizes]
        print(f"  {page:18s} {window:6s} " + " ".join(f"{c:9.1f}" if c is not None else f"{'-':>9s}" for c in cells))
    if len(sizes) > 1:
        first, last = sizes[0], sizes[-1]
        growth = [table[last][k] / table[first][k] for k in keys
                  if table[first].get(k) and table[last].get(k)]
        if growth:
            print(f"\n  spans x{last / first:g} -> page time x{min(growth):.2f} .. x{max(growth):.2f} "
                  f"(median x{sorted(growth)[len(growth) // 2]:.2f})")


def millions(n: int) -> str:
    return f"{n / 1e6:g}M spans"


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        t = time.perf_counter()
        child(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
        print(f"  ({time.perf_counter() - t:.0f} s for this size)")
        sys.exit(0)
    sys.exit(main())
