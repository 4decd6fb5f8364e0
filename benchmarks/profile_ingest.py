"""Where ingest time goes, in one process: the request path step by step, then the writer's INSERTs.

    .venv/bin/python benchmarks/profile_ingest.py [--spans 200000] [--batch 500] [--cprofile 25]
        [--env INGEST_SEGMENT_SPANS=50000 ...]

On a temp data dir (embedded chDB), with the bench's workload (benchmarks/payloads.py):
  request path   for every body: decode_protobuf (parse, validate, cardinality fold, re-encode) and the
                 fsynced spool append, timed apart (CPU seconds of this process, so other load matters less);
                 --cprofile N prints the N heaviest functions of that path.
  writer         writer.flush(force=True) over the whole spool, each INSERT with its time and ProfileEvents
                 (system.events around it: chDB keeps no system.query_log).
"""
import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embedded import embedded_store  # noqa: E402
# ProfileEvents of an INSERT worth printing: CPU, and the parse/plan/execute split where the server reports it
EVENTS = ("UserTimeMicroseconds", "SystemTimeMicroseconds", "OSCPUVirtualTimeMicroseconds", "InsertedRows",
          "QueryPreparedPlanMicroseconds", "QueryAnalysisMicroseconds", "QueryPlanOptimizeMicroseconds",
          "FunctionExecute", "CompileExpressionsMicroseconds", "DiskWriteElapsedMicroseconds",
          "MergeTreeDataWriterBlocks", "InsertQueryTimeMicroseconds")


def cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spans", type=int, default=200_000)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--cprofile", type=int, default=0, metavar="N")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    a = p.parse_args()
    env = dict(item.split("=", 1) for item in a.env)
    with embedded_store("profile-ingest-", INGEST_PROJECT_SPANS_PER_SECOND="0", **env):
        return run(a)


def run(a) -> int:
    from payloads import build_bodies

    from ingest import pipeline
    from ingest import inserts
    from projects.models import Project
    from store import client

    project, _ = Project.objects.get_or_create(name="bench")
    bodies = build_bodies(a.spans, a.batch)
    key = _key(project)
    writer = pipeline.get_writer()
    writer._stop.set()  # the profile flushes by hand: no background INSERTs during the request path
    profile = cProfile.Profile() if a.cprofile else None
    print(f"peak RSS after start-up and workload: {_peak_rss_mib():,.0f} MiB")
    c0, t0 = cpu_s(), time.perf_counter()
    if profile:
        profile.enable()
    accepted = sum(pipeline.export(key, body, "protobuf").accepted for body in bodies)
    if profile:
        profile.disable()
    request_cpu, request_wall = cpu_s() - c0, time.perf_counter() - t0
    print(f"request path: {accepted:,} spans, {request_cpu:.2f} CPU-s ({accepted / request_cpu:,.0f} spans/CPU-s), "
          f"{request_wall:.2f} s wall")
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(a.cprofile)
    inserts.insert_records = _traced(client, inserts.insert_records)
    c0, t0 = cpu_s(), time.perf_counter()
    writer.flush(force=True)
    write_cpu, write_wall = cpu_s() - c0, time.perf_counter() - t0
    print(f"writer: {write_wall:.2f} s wall, {write_cpu:.2f} CPU-s ({accepted / write_wall:,.0f} spans/s); "
          f"stored {client.query_rows('SELECT count() FROM spans')[0][0]:,}")
    pipeline.stop_writer()
    print(f"peak RSS of this process: {_peak_rss_mib():,.0f} MiB")
    return 0


def _peak_rss_mib() -> float:
    status = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def _key(project) -> str:
    from projects.models import ApiKey

    return f"Bearer {ApiKey.issue(project, scopes=['ingest', 'read'])[1]}"


def _events(client) -> dict:
    return dict(client.query_rows("SELECT event, value FROM system.events"))


def _traced(client, insert):
    """inserts.insert_records, printing each INSERT's time and its ProfileEvents (chDB keeps no system.query_log, so
    they are the difference of the global system.events around it; nothing else runs meanwhile)."""
    def traced(token, *args, **kwargs):
        before, t = _events(client), time.perf_counter()
        insert(token, *args, **kwargs)
        wall, after = time.perf_counter() - t, _events(client)
        ev = {k: after.get(k, 0) - before.get(k, 0) for k in EVENTS if after.get(k, 0) - before.get(k, 0)}
        peak = client.query_rows("SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'")[0][0]
        print(f"  INSERT {wall * 1000:>6,.0f} ms, memory tracked now {peak / 2**20:,.0f} MiB: "
              + " ".join(f"{k}={v:,}" for k, v in sorted(ev.items())), flush=True)
    return traced


if __name__ == "__main__":
    sys.exit(main())
