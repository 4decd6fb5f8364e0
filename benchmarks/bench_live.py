"""Pages of the running `up` while it ingests and runs the minute jobs: `make bench-live` (issue 37, item 1).

    make bench-live                                   (BENCH_LIVE_ARGS="--repeat 3 --idle" to pass options)
    .venv/bin/python benchmarks/bench_live.py [--spans 2000000] [--rate 5000] [--repeat 5] [--warmup 90] [--interval 2]
        [--idle] [--baseline REF --rounds 2] [--profile DIR] [--data-dir DIR] [--pages overview,keys]

1. A data dir with a day of data: bench_analysis's generator (4 attempt spans : 1 stage span, 10 services
   svc-0..9) over the 24 hours before the current hour, materialized and aggregated, the jobs' watermarks at the
   store's clock (so `up` does not materialize the day again); a project, a member with a password, an ingest key.
   Done in a child process (chDB allows one process per data dir); --data-dir keeps it for the next run.
2. `manage.py up` on it (a subprocess, LOG_LEVEL=INFO for the minute pipeline's step times), and beside it
   benchmarks/steady_sender.py (a process of its own): --rate spans/s of simulated healthy traffic into
   svc-0..9 plus the demo's live trickle. After --warmup seconds (the minute jobs at work on the live spans):
3. every dashboard page (dashboard.urls; a run's page for a backfilled run) over the 1 h and 24 h ranges, as the
   member through real HTTP with a session: one warm-up round (printed as the first views: nothing of them kept or
   read ahead yet), then --repeat rounds, each round every case once (so the minute jobs fall on every page alike),
   a request every --interval seconds (a member reading pages: a phase spans minute jobs and turns of the minute,
   after which kept answers must be read again; back to back, the requests load the machine themselves). A page's server time is its Server-Timing `app` figure
   (latency_obs/server_timing.py: the request in Django, not the wait for a web thread); the client's time and the
   request thread's CPU are printed beside it. p95 by nearest rank, against the 500 ms target.

--idle also times the pages before the sender starts (same up, nothing sent). --baseline REF runs the code of a git
ref (exported with `git archive`, or a directory) and this checkout (or --code REF) alternately, --rounds times each,
on the same data dir and machine, and prints them side by side. --profile DIR records `py-spy` (--idle --threads,
raw stacks) of up during each timed phase. Also printed: up's CPU by thread over the timed phase, the minute
pipeline's step times, the sender's achieved rate. A benchmark: exits 0 whatever the figures.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
PY_SPY = ROOT / ".venv" / "bin" / "py-spy"  # --profile only: a profiler, not a dependency of the product
sys.path.insert(0, str(ROOT / "benchmarks"))
from server import free_port, thread_cpu_s  # noqa: E402

TARGET_MS = 500
REQUEST_TIMEOUT_S = 300
USER, PASSWORD = "bench-member", "bench-member-password"
DROPPED_ENV = ("DATABASE_URL", "CLICKHOUSE_URL", "CELERY_BROKER_URL", "INGEST_SPOOL_DIR", "PYTEST_XDIST_WORKER")
TIMING = re.compile(r"app;dur=([\d.]+), cpu;dur=([\d.]+)")
STEP = re.compile(r"minute pipeline at \S+: (.*)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spans", type=int, default=2_000_000, help="backfilled spans over the day")
    p.add_argument("--rate", type=float, default=5000, help="the steady sender's spans/s")
    p.add_argument("--repeat", type=int, default=5, help="timed rounds of every page")
    p.add_argument("--warmup", type=float, default=90, help="seconds of sending before the pages are timed")
    p.add_argument("--windows", default="1h,24h")
    p.add_argument("--pages", help="only these URL names, comma-separated")
    p.add_argument("--idle", action="store_true", help="also time the pages before the sender starts")
    p.add_argument("--phase-limit", type=float, default=900, help="seconds of page requests at most per phase")
    p.add_argument("--interval", type=float, default=1, help="seconds from one request's start to the next one's, "
                   "a member reading pages (0: back to back, the requests then load the machine themselves)")
    p.add_argument("--baseline", help="a git ref (or a directory of code): its code and this checkout's, alternately")
    p.add_argument("--code", help="a git ref (or a directory of code) to run instead of this checkout")
    p.add_argument("--rounds", type=int, default=1, help="runs of each code (with --baseline)")
    p.add_argument("--profile", help="a directory for py-spy's raw stacks of up during each timed phase")
    p.add_argument("--data-dir", help="keep (or reuse) the data dir")
    p.add_argument("--up-env", nargs="*", default=[], help="KEY=VALUE for up (e.g. CLICKHOUSE_READ_THREADS=2)")
    p.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)  # the child that fills the data dir
    a = p.parse_args()
    if a.profile and not PY_SPY.exists():
        p.error(f"--profile needs py-spy in the venv: {PYTHON.parent / 'pip'} install py-spy==0.4.3")
    data_dir = Path(a.data_dir or tempfile.mkdtemp(prefix="bench-live-"))
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env.update(DJANGO_SETTINGS_MODULE="latency_obs.settings", LATENCY_OBS_DATA_DIR=str(data_dir),
               CLICKHOUSE_RETENTION_DAYS="3650", PYTHONUNBUFFERED="1")
    if a.prepare:
        os.environ.update(env, LOG_LEVEL="WARNING")
        return prepare(a.spans)
    scratch: list[Path] = []
    try:
        codes = [(a.code, code_dir(a.code, scratch)) if a.code else ("this checkout", ROOT)]
        if a.baseline:
            codes.insert(0, (a.baseline, code_dir(a.baseline, scratch)))
        facts = json.loads(check([str(PYTHON), __file__, "--prepare", "--spans", str(a.spans), "--data-dir",
                                  str(data_dir)], env).splitlines()[-1])
        print(f"live benchmark: data dir {data_dir}; {facts['spans']:,} spans stored; sender {a.rate:,.0f} spans/s")
        os.environ.update(env)
        cases = page_cases(facts, a.windows.split(","), a.pages)
        results = {}
        for r in range(a.rounds):
            for label, code in (codes if r % 2 == 0 else codes[::-1]):
                for load, timed in run_up(a, code, env, facts, cases, f"{label} #{r + 1}").items():
                    results.setdefault((label, load), []).extend(timed)
        report(results, cases)
    finally:
        for path in scratch:
            shutil.rmtree(path, ignore_errors=True)
        if not a.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0


def check(cmd: list[str], env: dict, cwd: Path = ROOT) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd[:3])} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def code_dir(ref: str, scratch: list[Path]) -> Path:
    """A directory of code: `ref` itself when it is one, else the tree of the git ref exported into a temp dir (git
    archive: nothing in this checkout changes), which is added to `scratch` to be removed at the end."""
    if Path(ref).is_dir():
        return Path(ref).resolve()
    into = Path(tempfile.mkdtemp(prefix="bench-live-code-"))
    scratch.append(into)
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def prepare(spans: int) -> int:
    """The child: migrate, the member and key, the day backfilled (unless there), watermarks; prints facts as JSON."""
    import django

    django.setup()
    from bench_analysis import ATTEMPTS_SQL, STAGES_SQL, timed
    from bench_ui import facts as data_facts
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from analysis.models import JobWatermark
    from analysis.rollups.materialize import materialize, store_now
    from analysis.work.backlog import DIAGNOSE, MATERIALIZE
    from projects.models import ApiKey, Project
    from store import client
    from store.migrate import migrate

    call_command("migrate", verbosity=0)
    migrate()
    project, _ = Project.objects.get_or_create(id=1, defaults={"name": "bench"})
    user = get_user_model().objects.filter(username=USER).first() or get_user_model()(username=USER)
    user.set_password(PASSWORD)
    user.save()
    project.members.add(user)
    _, key = ApiKey.issue(project, ["ingest", "read"], name=f"bench-live-{int(time.time())}")
    if client.query_rows("SELECT count() FROM spans")[0][0] < spans * 4 // 5:
        day = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0) - timedelta(days=1)
        params = {"day": day.replace(tzinfo=None), "n": spans * 4 // 5, "m": spans - spans * 4 // 5}
        print(f"backfill: {spans:,} spans from {day:%Y-%m-%d %H:%M} UTC", file=sys.stderr)
        timed("generate attempt spans", client.command, ATTEMPTS_SQL, parameters=params)
        timed("generate stage spans", client.command, STAGES_SQL, parameters=params)
        timed("materialize and aggregate the day", materialize, 1, day, day + timedelta(days=1))
        client.command("OPTIMIZE TABLE request_buckets FINAL")
    for name in (MATERIALIZE, DIAGNOSE):  # up's jobs start from now, not from the backfill
        JobWatermark.objects.update_or_create(name=name, defaults={"at": store_now()})
    f = data_facts(project.pk)
    print(json.dumps({"key": key, "run_id": f["run_id"], "spans": f["counts"]["spans"]}))
    return 0


def page_cases(facts: dict, windows: list[str], only: str | None) -> list[tuple[str, str, str]]:
    """(page, window, path) for every URL name of dashboard.urls but those keyed by a stored id (incident, review)."""
    import django

    django.setup()
    from django.urls import reverse

    from dashboard import urls

    out = []
    for pattern in urls.urlpatterns:
        if set(pattern.pattern.converters) - {"run_id"} or (only and pattern.name not in only.split(",")):
            continue
        kwargs = {"run_id": facts["run_id"]} if "run_id" in pattern.pattern.converters else {}
        out += [(pattern.name, window, reverse(pattern.name, kwargs=kwargs)) for window in windows]
    return out


def run_up(a, code: Path, env: dict, facts: dict, cases: list, label: str) -> dict[str, list]:
    """Start up from `code` with the sender beside it, time the pages (idle first with --idle); {load: samples}."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    up_env = {**env, "LOG_LEVEL": "INFO", **dict(kv.split("=", 1) for kv in a.up_env)}
    log_path = Path(env["LATENCY_OBS_DATA_DIR"]) / "bench-live-up.log"
    log = open(log_path, "w")
    up = subprocess.Popen([str(PYTHON), "manage.py", "up", "--port", str(port), "--grpc-port", "0"], cwd=code,
                          env=up_env, stdout=log, stderr=subprocess.STDOUT)
    sender = None
    out = {}
    try:
        wait_healthy(url, up)
        session = logged_in(url)
        if a.idle:
            time.sleep(min(a.warmup, 30))
            out["idle"] = time_pages(a, url, session, cases, up.pid, log_path, f"{label} idle")
        sender = subprocess.Popen([str(PYTHON), str(ROOT / "benchmarks" / "steady_sender.py"), "--url", url, "--key",
                                   facts["key"], "--rate", str(a.rate), "--trickle"],
                                  cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        print(f"  [{label}] sender: {sender.stdout.readline().strip()}", flush=True)
        time.sleep(a.warmup)
        out["sending"] = time_pages(a, url, session, cases, up.pid, log_path, f"{label} sending")
    finally:
        if sender is not None:
            sender.send_signal(2)
            print(f"  [{label}] sender: {sender.communicate(timeout=120)[0].strip()}")
        up.send_signal(2)
        up.wait(300)
        log.close()
    return out


def wait_healthy(url: str, up: subprocess.Popen, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if up.poll() is not None:
            raise SystemExit(f"up exited with {up.returncode} at start")
        try:
            if requests.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise SystemExit("up did not answer /healthz")


def logged_in(url: str) -> requests.Session:
    """A browser's session of the member: the login form's CSRF cookie and token, then the form posted."""
    session = requests.Session()
    session.get(f"{url}/login/", timeout=60)
    form = {"username": USER, "password": PASSWORD, "csrfmiddlewaretoken": session.cookies["csrftoken"]}
    answer = session.post(f"{url}/login/", data=form, allow_redirects=False, timeout=60,
                          headers={"Referer": f"{url}/login/"})
    if answer.status_code != 302:
        raise SystemExit(f"login failed: {answer.status_code}")
    return session


def time_pages(a, url: str, session, cases: list, pid: int, log_path: Path, label: str) -> list[dict]:
    """A warm-up round, then --repeat rounds of every case, until --phase-limit seconds have passed (the rounds
    then stop after the request under way); samples {case, app_ms, cpu_ms, client_ms, status}."""
    deadline = time.monotonic() + a.phase_limit
    first = [ask(session, url, case) for case in cases if time.monotonic() < deadline]
    profiler = start_profile(a.profile, pid, label)
    cpu, log_at, began = thread_cpu_s(pid), log_path.stat().st_size, time.monotonic()
    samples = [paced(a.interval, ask(session, url, case)) for _ in range(a.repeat) for case in cases
               if time.monotonic() < deadline]
    took = time.monotonic() - began
    if profiler is not None:
        profiler.send_signal(2)
        profiler.wait(60)
    cut = f", stopped at --phase-limit {a.phase_limit:.0f} s" if len(samples) < a.repeat * len(cases) else ""
    print(f"  [{label}] {len(samples)} requests in {took:.0f} s{cut}; load average {os.getloadavg()[0]:.1f}")
    # the warm-up round: nothing of these windows kept or read ahead yet (a member's first look), not in the p95
    print("    first views, ms: " + ", ".join(f"{s['case'][0]} {s['case'][1]} {s['app_ms']:.0f}" for s in first))
    print_cpu(thread_cpu_s(pid), cpu, took)
    print_steps(log_path.read_text(errors="replace")[log_at:])
    return samples


def paced(interval: float, sample: dict) -> dict:
    """The sample, after waiting out the rest of --interval since its request began (a member reading the page)."""
    time.sleep(max(0.0, interval - sample["client_ms"] / 1000))
    return sample


def ask(session, url: str, case: tuple) -> dict:
    """One page request's sample; an answer without Server-Timing (none came: timed out) counts the client's time."""
    t = time.perf_counter()
    try:
        answer = session.get(url + case[2], params={"range": case[1]}, timeout=REQUEST_TIMEOUT_S)
        status, timing = answer.status_code, TIMING.search(answer.headers.get("Server-Timing", ""))
    except requests.Timeout:
        status, timing = "timeout", None
    client_ms = (time.perf_counter() - t) * 1000
    app_ms, cpu_ms = (float(timing[1]), float(timing[2])) if timing else (client_ms, float("nan"))
    return {"case": case[:2], "app_ms": app_ms, "cpu_ms": cpu_ms, "client_ms": client_ms, "status": status}


def start_profile(directory: str | None, pid: int, label: str):
    if not directory:
        return None
    Path(directory).mkdir(parents=True, exist_ok=True)
    out = Path(directory) / (re.sub(r"\W+", "-", label).strip("-") + ".txt")
    return subprocess.Popen([str(PY_SPY), "record", "--pid", str(pid), "--idle", "--threads",
                             "--nonblocking", "--rate", "50", "--format", "raw", "--output", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def print_cpu(after: dict, before: dict, seconds: float) -> None:
    """up's CPU over the phase by thread name (cores used): ClickHouse's pools and Python's threads."""
    used = sorted(((after[k] - before.get(k, 0.0), k) for k in after), reverse=True)
    total = sum(s for s, _ in used)
    print(f"    up's CPU {total / seconds:.2f} cores: " + ", ".join(f"{k} {s / seconds:.2f}" for s, k in used[:8]))


def print_steps(log: str) -> None:
    """The minute pipeline's step times over the phase (from its INFO lines): median and max seconds."""
    steps = defaultdict(list)
    for line in STEP.findall(log):
        for name, seconds in re.findall(r"(\w+) ([\d.]+) s", line):
            steps[name].append(float(seconds))
    runs = max((len(v) for v in steps.values()), default=0)
    print(f"    minute pipeline, {runs} runs: " + (", ".join(
        f"{k} {statistics.median(v):.1f}/{max(v):.1f} s" for k, v in steps.items()) or "none logged"))


def nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else float("nan")


def report(results: dict, cases: list) -> None:
    """p95 of server time per page and window for each (code, load), with the client's p95 and the thread's CPU p50."""
    columns = list(results)
    print(f"\nserver time p95 ms (Server-Timing app; client p95 in brackets; request thread CPU p50), "
          f"target {TARGET_MS} ms, * = over")
    print(f"  {'page':16s} {'window':6s} " + "  ".join(f"{' / '.join(c):>30s}" for c in columns))
    over = defaultdict(int)
    for case in dict.fromkeys(c[:2] for c in cases):
        cells = []
        for column in columns:
            mine = [s for s in results[column] if s["case"] == case]
            p95 = nearest_rank([s["app_ms"] for s in mine], 0.95)
            client = nearest_rank([s["client_ms"] for s in mine], 0.95)
            cpu = statistics.median([s["cpu_ms"] for s in mine]) if mine else float("nan")
            bad = sorted({str(s["status"]) for s in mine} - {"200"})
            over[column] += p95 > TARGET_MS
            cells.append(f"{'*' if p95 > TARGET_MS else ' '}{p95:7.0f} ({client:6.0f}; {cpu:4.0f})"
                         + (f" {bad}" if bad else "").rjust(8))
        print(f"  {case[0][:16]:16s} {case[1]:6s} " + "  ".join(f"{c:>30s}" for c in cells))
    for column in columns:
        print(f"  {' / '.join(column)}: {over[column]} of {len(set(c[:2] for c in cases))} page/window cases over "
              f"{TARGET_MS} ms")


if __name__ == "__main__":
    sys.exit(main())
