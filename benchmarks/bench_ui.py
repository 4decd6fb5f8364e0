"""Server-side time of every dashboard page over 10 million stored spans: `make bench-ui`.

    make bench-ui                          (BENCH_SPANS=200000 make bench-ui for a quick run)
    .venv/bin/python benchmarks/bench_ui.py [--spans N] [--repeat 20] [--data-dir DIR]

On a temp data dir (embedded chDB, temp SQLite): backfills the spans as bench_analysis does (24 h,
10 services, 80 % attempt spans, 20 % stage spans), materializes request_buckets, merges its parts,
stores two diagnoses, then requests every page of dashboard.urls in this process through Django's test
Client (the whole middleware stack, no network) as a member of the project: 2 warm-ups, then N timed
requests per page, window (1 h and 24 h ending at the latest data, which ends on an hour, and "24h:37" and "1h:37",
24 h and 1 h ending 23 minutes earlier as a dashboard's window ends at a minute: their edges are read from attempts,
default filter only) and filter; --pages and --windows keep some of them. Target: p95 <= 500 ms
per page. Pages over it are marked, and the run still exits 0 (a benchmark, not a test). Where the
time goes: every ClickHouse call is timed and attributed to its .sql file, Django ORM queries to "orm".
"""
import argparse
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import timedelta

from bench_analysis import ATTEMPTS_SQL, DAY, ROOT, STAGES_SQL, timed

from analysis.scope import Scope

TARGET_MS = 500
AGGREGATES = ("aggregated_hours", "scheduler_minutes", "request_hours", "bucket_minutes", "coverage_hours",
              "bucket_hours", "tenant_hours", "tenant_service_hours", "share_hours", "segment_hours", "retry_hours")
ROUTE = "/v1/chat/completions"  # one of the routes the backfill writes


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spans", type=int, default=int(os.environ.get("BENCH_SPANS", 10_000_000)))
    p.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", 20)))
    p.add_argument("--data-dir", help="reuse a data dir (keeps the generated spans between runs)")
    p.add_argument("--pages", help="only these URL names, comma-separated (e.g. diagnosis-page,scheduler)")
    p.add_argument("--windows", help="only these windows, comma-separated (1h, 24h, 24h:37, 1h:37, 7d)")
    a = p.parse_args()
    data_dir = a.data_dir or tempfile.mkdtemp(prefix="bench-ui-")
    os.environ.update(LATENCY_OBS_DATA_DIR=data_dir, DJANGO_SETTINGS_MODULE="latency_obs.settings",
                      CLICKHOUSE_RETENTION_DAYS="3650", LOG_LEVEL="WARNING", ALLOWED_HOSTS="testserver")
    for var in ("CLICKHOUSE_URL", "DATABASE_URL", "DEBUG"):
        os.environ.pop(var, None)
    sys.path.insert(0, str(ROOT))
    try:
        return run(a)
    finally:
        if not a.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)


def backfill(spans: int) -> None:
    """bench_analysis's generator at `spans` spans (4 attempts : 1 stage), materialized and merged."""
    from analysis.rollups.materialize import materialize
    from store import client

    attempts = spans * 4 // 5
    params = {"day": DAY.replace(tzinfo=None), "n": attempts, "m": spans - attempts}
    print(f"ui benchmark: {spans:,} spans over 24 h, 10 services (data: {os.environ['LATENCY_OBS_DATA_DIR']})")
    if client.query_rows("SELECT count() FROM spans")[0][0] >= attempts:
        print("  spans already there (reused data dir)")
        # a data dir from before the aggregates (or one of them) gets them for the whole day
        if not all(client.query_rows(f"SELECT count() FROM {table}")[0][0] for table in AGGREGATES):
            from analysis.rollups.aggregates import refresh
            timed("aggregate the whole day (hours from before aggregates)", refresh, 1, DAY, DAY + timedelta(days=1))
        return
    took = [timed("generate attempt spans", client.command, ATTEMPTS_SQL, parameters=params)[1],
            timed("generate stage spans", client.command, STAGES_SQL, parameters=params)[1],
            timed("materialize the whole day (backfill)", materialize, 1, DAY, DAY + timedelta(days=1))[1],
            timed("merge parts (OPTIMIZE TABLE request_buckets FINAL)", client.command,
                  "OPTIMIZE TABLE request_buckets FINAL")[1]]
    print(f"  {'backfill total':58s} {sum(took):7.2f} s")


class Attribution:
    """Times every ClickHouse call by .sql file (exact text match) and every ORM query, in this process."""

    def __init__(self):
        from store import client
        from store.sql import SqlFiles

        # each query as it is sent: fragments ({{window}}, ...) in place; _*.sql files are fragments only
        texts = {SqlFiles(path.parent).text(path.stem): path.stem for path in sorted(ROOT.glob("*/sql/*.sql"))
                 if not path.stem.startswith("_")}
        self.files = {**{first_line(text): stem for text, stem in texts.items()}, **texts}
        self.calls = defaultdict(lambda: [0, 0.0])  # label -> [calls, seconds]
        for name in ("query", "query_rows", "command"):
            setattr(client, name, self._wrap(getattr(client, name)))

    def label(self, sql: str) -> str:
        """The .sql file: by its whole text, else by its first line (a file filled in with str.format)."""
        return self.files.get(sql) or self.files.get(first_line(sql)) or first_line(sql)[:60]

    def _wrap(self, fn):
        def timed_call(sql, *args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(sql, *args, **kwargs)
            finally:
                self.add(self.label(sql), time.perf_counter() - t)
        return timed_call

    def add(self, label: str, seconds: float) -> None:
        self.calls[label][0] += 1
        self.calls[label][1] += seconds

    def orm(self, execute, sql, params, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.add("orm", time.perf_counter() - t)

    def take(self) -> dict:
        out, self.calls = dict(self.calls), defaultdict(lambda: [0, 0.0])
        return out


def first_line(sql: str) -> str:
    return sql.strip().splitlines()[0] if sql.strip() else ""


def nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def setup_project():
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from projects.models import Project
    from store.migrate import migrate

    call_command("migrate", verbosity=0)
    migrate()
    project, _ = Project.objects.get_or_create(id=1, defaults={"name": "bench"})
    user, _ = get_user_model().objects.get_or_create(username="bench-member")
    project.members.add(user)
    return project, user


def facts(project_id: int) -> dict:
    """Row counts, the data's latest minute, and a run and a tenant of the default service in the last hour."""
    from analysis.reads import lookups
    from store import client

    end = lookups.latest_request(project_id).replace(second=0, microsecond=0) + timedelta(minutes=1)
    [(earliest,)] = client.query_rows("SELECT min(queued_at) FROM request_buckets WHERE project_id = {p:UInt32}",
                                      parameters={"p": project_id})
    service = lookups.services(Scope(project_id, "", end - timedelta(hours=1), end))[0]["service"]
    near = {"p": project_id, "s": service, "start": (end - timedelta(hours=1)).replace(tzinfo=None)}
    [(run_id,)] = client.query_rows(
        "SELECT run_id FROM request_buckets WHERE project_id = {p:UInt32} AND service = {s:String} "
        "AND queued_at >= {start:DateTime64(9, 'UTC')} ORDER BY run_attempt_count DESC, run_id LIMIT 1",
        parameters=near)
    [(tenant,)] = client.query_rows(
        "SELECT tenant FROM request_buckets WHERE project_id = {p:UInt32} AND service = {s:String} "
        "AND queued_at >= {start:DateTime64(9, 'UTC')} GROUP BY tenant ORDER BY count() DESC, tenant LIMIT 1",
        parameters=near)
    counts = {name: client.query_rows(sql)[0][0] for name, sql in (
        ("spans", "SELECT count() FROM spans"),
        ("attempt spans", "SELECT count() FROM spans WHERE role = 'attempt'"),
        ("request_buckets rows", "SELECT count() FROM request_buckets FINAL"),
        ("runs", "SELECT uniqExact(run_id) FROM request_buckets"),
        ("request_buckets parts", "SELECT count() FROM system.parts WHERE table = 'request_buckets' AND active"))}
    return {"end": end, "span": end - earliest.replace(tzinfo=end.tzinfo), "service": service, "run_id": run_id,
            "tenant": tenant, "counts": counts}


def store_diagnoses(project_id: int, service: str, end) -> None:
    from analysis import windows
    from analysis.work import jobs

    for label, length in (("recent 15 min", windows.RECENT), ("last hour", timedelta(hours=1))):
        row, _ = timed(f"diagnose_window {service}, {label}", jobs.diagnose_window, project_id, service,
                       end - length, end)
        print(f"    -> {row.verdict}")


def cases(f: dict) -> list[tuple]:
    """(page, window, variant, path, query) for every URL name of dashboard.urls, window and filter."""
    from django.urls import reverse

    from analysis.windows import iso
    from dashboard import urls

    # (label, length, minutes before the data's end it ends, variants): the data ends on an hour, a dashboard's
    # window at the next minute, so "24h:37" and "1h:37" time the pages over edges read from attempts (default filter
    # only)
    windows = [("1h", timedelta(hours=1), 0, None), ("24h", timedelta(hours=24), 0, None),
               ("24h:37", timedelta(hours=24), 23, 1), ("1h:37", timedelta(hours=1), 23, 1)]
    if f["span"] > timedelta(hours=24):
        windows.append(("7d", timedelta(days=7), 0, None))
    out = []
    for pattern in urls.urlpatterns:
        if set(pattern.pattern.converters) - {"run_id"}:
            continue  # a stored weekly review (by week): it reads no spans
        kwargs = {"run_id": f["run_id"]} if "run_id" in pattern.pattern.converters else {}
        path = reverse(pattern.name, kwargs=kwargs)
        variants = [("default service", {}), (f"route={ROUTE}", {"route": ROUTE})]
        if pattern.name == "runs":
            variants += [(f"q=<run {f['run_id'][:8]}…>", {"q": f["run_id"]}),
                         (f"tenant={f['tenant']}", {"tenant": f["tenant"]})]
        for window, length, back, kept in windows:
            if window == "7d" and pattern.name != "overview":
                continue
            end = f["end"] - timedelta(minutes=back)
            for variant, extra in variants[:kept]:
                out.append((pattern.name, window, variant, path,
                            {"start": iso(end - length), "end": iso(end), **extra}))
    return out


def measure(client, attribution, path: str, params: dict, repeat: int) -> dict:
    from django.core.cache import cache

    statuses, sizes, took = set(), set(), []
    for i in range(2 + repeat):
        if i == 2:
            attribution.take()  # attribute the timed requests only
        cache.clear()  # cold every time: the Diagnosis page caches a live result for a minute
        t = time.perf_counter()
        try:
            response = client.get(path, params)
            status, size = str(response.status_code), len(response.content)
        except Exception as exc:  # a broken page is a figure too; the others still get measured
            status, size = f"ERR {type(exc).__name__}: {exc}", 0
        if i >= 2:
            took.append((time.perf_counter() - t) * 1000)
        statuses.add(status)
        sizes.add(size)
    return {"p50": statistics.median(took), "p95": nearest_rank(took, 0.95), "max": max(took),
            "bytes": max(sizes), "status": "/".join(sorted(statuses)), "sql": attribution.take()}


def placeholders() -> set[str]:
    """URL names whose view module still says it is a placeholder."""
    from dashboard import urls

    return {p.name for p in urls.urlpatterns
            if (sys.modules[p.callback.__module__].__doc__ or "").startswith("Placeholder")}


def report(results: list[tuple], repeat: int) -> None:
    print(f"\npages: {repeat} timed requests each after 2 warm-ups; ms of server-side time (p95 = nearest rank); "
          f"* = p95 over {TARGET_MS} ms")
    head = (f"  {'page':16s} {'window':6s} {'filter':28s} {'p50':>7s} {'p95':>7s} {'max':>7s} {'ch+orm':>7s} "
            f"{'bytes':>9s}  status")
    print(head + "\n  " + "-" * (len(head) - 2))
    unfinished = placeholders()
    for (name, window, variant, _, _), r in results:
        db = sum(s for _, s in r["sql"].values()) * 1000 / repeat
        mark = "*" if r["p95"] > TARGET_MS else " "
        note = "  (placeholder)" if name in unfinished else ""
        print(f"{mark} {name:16s} {window:6s} {variant[:28]:28s} {r['p50']:7.1f} {r['p95']:7.1f} {r['max']:7.1f} "
              f"{db:7.1f} {r['bytes']:9,d}  {r['status'][:60]}{note}")
    print("\nwhere the time goes (mean ms per request, by .sql file; x = calls per request):")
    for (name, window, variant, _, _), r in results:
        parts = sorted(r["sql"].items(), key=lambda kv: -kv[1][1])
        shown = ", ".join(f"{label} {s * 1000 / repeat:.0f} (x{n / repeat:g})" for label, (n, s) in parts[:6])
        print(f"  {name} {window} {variant[:28]}: {shown}")
    totals = defaultdict(lambda: [0, 0.0])
    for _, r in results:
        for label, (n, s) in r["sql"].items():
            totals[label][0] += n
            totals[label][1] += s
    print("\nall pages together, by .sql file:")
    print(f"  {'query':40s} {'calls':>7s} {'total s':>8s} {'mean ms':>8s}")
    for label, (n, s) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        print(f"  {label[:40]:40s} {n:7d} {s:8.2f} {s * 1000 / n:8.1f}")
    over = [(name, window, variant, r["p95"]) for (name, window, variant, _, _), r in results if r["p95"] > TARGET_MS]
    failed = sorted({(name, r["status"]) for (name, *_), r in results if not r["status"].startswith("2")})
    print()
    for name, status in failed:
        print(f"NOT 200: {name}: {status}")
    if over:
        print(f"OVER TARGET: {len(over)} of {len(results)} page measurements have p95 > {TARGET_MS} ms: "
              + "; ".join(f"{n} {w} {v} ({p:.0f} ms)" for n, w, v, p in over))
    else:
        print(f"all {len(results)} page measurements within target (p95 <= {TARGET_MS} ms)")


def run(a) -> int:
    import logging

    import django

    django.setup()
    logging.getLogger("django.request").setLevel(logging.CRITICAL)  # a failing page shows in its status column
    from django.db import connection
    from django.test import Client

    project, user = setup_project()
    backfill(a.spans)
    f = facts(project.pk)
    print("  rows: " + ", ".join(f"{k} {v:,}" for k, v in f["counts"].items()))
    print(f"  data until {f['end']:%Y-%m-%d %H:%M} UTC, spanning {f['span']}; default service {f['service']}, "
          f"run {f['run_id']}, tenant {f['tenant']}")
    store_diagnoses(project.pk, f["service"], f["end"])
    if f["span"] <= timedelta(hours=24):
        print("  (the data spans one day: Overview is not measured over 7 d)")
    attribution = Attribution()
    client = Client()
    client.force_login(user)
    results = []
    todo = [case for case in cases(f) if (not a.pages or case[0] in a.pages.split(","))
            and (not a.windows or case[1] in a.windows.split(","))]
    print(f"  timing {len(todo)} page/window/filter cases; load average {load()} ({os.cpu_count()} CPUs)")
    with connection.execute_wrapper(attribution.orm):
        for i, case in enumerate(todo, 1):
            r = measure(client, attribution, case[3], case[4], a.repeat)
            print(f"  [{i}/{len(todo)}] {case[0]} {case[1]} {case[2]}: p95 {r['p95']:.0f} ms", flush=True)
            results.append((case, r))
    print(f"  load average at the end {load()}: other programs on the machine make the figures noisy")
    report(results, a.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
