"""The accept path of OTLP/HTTP traces step by step, in this process: `bench_ingest.py --steps` (issue 37 item 2).

Over the bench's bodies, each step of ingest.pipeline.export is called on its own for every body, in the order
export calls them, each step's input made by the step before (so every step sees what it sees in a request):

  key          projects.keys.authorize (a cached key: a hash and a dict lookup)
  parse        ExportTraceServiceRequest.FromString (the floor: the least any Python ingest pays)
  validation   ingest.decode.validate: ids, times, the retention window, per span; invalid spans removed
  re-encoding  ingest.decode.reencode: unknown fields dropped, the request serialized for the spool
  guards       ingest.cardinality.fold: each span's service, route, tenant, instance against the hourly limits
  quotas       ingest.limits.check_rate and spool_quota (the token bucket runs: rate 10^9 spans/s, never refusing)
  spool        Spool.append: framed, written and fdatasync'd (group commit; one sender here, so one fsync a body)
  export       the whole of ingest.pipeline.export, the sum of the above plus its glue (spool fsync included)

Printed per step: CPU µs a span (this thread's time.thread_time, best of --repeat passes) and wall µs a span (the
spool's fsync is wall, not CPU). Runs on a temp embedded store (benchmarks/embedded.py); the writer never runs.
"""
from __future__ import annotations

import time
from pathlib import Path


def run_steps(bodies: list[bytes], spans: int, repeat: int, parse_floor: float) -> int:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from embedded import embedded_store

    with embedded_store("bench-ingest-steps-", INGEST_PROJECT_SPANS_PER_SECOND="1000000000") as data_dir:
        return _run(bodies, spans, max(repeat, 3), parse_floor, data_dir)


def _run(bodies, spans, repeat, parse_floor, data_dir: Path) -> int:
    from django.conf import settings
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from ingest import cardinality, decode, limits, pipeline
    from ingest.spool import Spool
    from projects.keys import authorize
    from projects.models import ApiKey, Project

    project, _ = Project.objects.get_or_create(name="bench")
    header = f"Bearer {ApiKey.issue(project, scopes=['ingest', 'read'])[1]}"
    pid = project.pk
    max_attributes = settings.INGEST_MAX_ATTRIBUTES

    def spool() -> Spool:
        return Spool(data_dir / f"spool-{time.monotonic_ns()}", segment_spans=settings.INGEST_SEGMENT_SPANS,
                     max_bytes=1 << 40, fsync=settings.INGEST_SPOOL_FSYNC, max_age_s=1e9)

    # each step: (name, the step over every body, what to do untimed before each pass or None)
    state: dict = {}

    def parse():
        state["requests"] = [ExportTraceServiceRequest.FromString(b) for b in bodies]

    steps = [
        ("key", lambda: [authorize(header, "ingest") for _ in bodies], None),
        ("parse", parse, None),
        ("validation", lambda: [decode.validate(r, decode.accepted_window(), max_attributes) for r in state["requests"]],
         lambda: state.update(requests=[ExportTraceServiceRequest.FromString(b) for b in bodies])),
        ("re-encoding", lambda: state.update(encoded=[decode.reencode(r) for r in state["requests"]]), None),
        ("guards", lambda: [cardinality.fold(pid, r, b) for r, b in zip(state["requests"], state["encoded"])], None),
        ("quotas", lambda: [(limits.check_rate(pid, n), limits.spool_quota(pid)) for n in _counts(bodies)], None),
        ("spool", lambda: _append_all(state["spool"], pid, state["encoded"], _counts(bodies)),
         lambda: state.update(spool=spool())),
    ]
    results: dict[str, tuple[float, float]] = {}
    for name, step, prepare in steps:
        results[name] = _timed(step, prepare, repeat)
        if name == "parse":
            parse()  # the requests the next steps take
    state.update(spool=None)

    writer = pipeline.get_writer()
    writer._stop.set()  # nothing is inserted: only the request path is timed

    def whole():
        for body in bodies:
            pipeline.export(header, body, "protobuf")

    results["export (all)"] = _timed(whole, None, repeat)
    pipeline.stop_writer(drain=False)

    print(f"\naccept path step by step, in this process ({spans:,} spans in {len(bodies)} bodies; best of {repeat} "
          f"passes; CPU of this thread and wall, us a span, and CPU us a request):")
    steps_cpu = sum(cpu for name, (cpu, _) in results.items() if name != "export (all)")
    for name, (cpu, wall) in results.items():
        print(f"  {name:<14} {cpu / spans * 1e6:>7.2f} us CPU   {wall / spans * 1e6:>7.2f} us wall   "
              f"{cpu / len(bodies) * 1e6:>8.1f} us CPU a request")
    print(f"  {'sum of steps':<14} {steps_cpu / spans * 1e6:>7.2f} us CPU")
    print(f"protobuf parse (floor): {1e6 / parse_floor:.2f} us a span ({parse_floor:,.0f} spans/s)")
    return 0


def _counts(bodies) -> list[int]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    if not hasattr(_counts, "cache"):
        _counts.cache = [sum(len(ss.spans) for rs in ExportTraceServiceRequest.FromString(b).resource_spans
                             for ss in rs.scope_spans) for b in bodies]
    return _counts.cache


def _append_all(spool, pid: int, encoded: list[bytes], counts: list[int]) -> None:
    for body, n in zip(encoded, counts):
        spool.append(pid, body, n)
    spool.close()


def _timed(step, prepare, repeat: int) -> tuple[float, float]:
    """(best CPU seconds, best wall seconds) of `step` over `repeat` passes; `prepare` runs untimed before each."""
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        if prepare:
            prepare()
        cpu, wall = time.thread_time(), time.perf_counter()
        step()
        best_cpu, best_wall = min(best_cpu, time.thread_time() - cpu), min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall

