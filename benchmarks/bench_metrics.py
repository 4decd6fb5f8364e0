"""Metric points per second through the metrics ingest path: `make bench-ingest` runs it after the spans.

    .venv/bin/python benchmarks/bench_metrics.py [--points 400000] [--per-request 2000]

On a temp data dir (embedded chDB): builds OTLP ExportMetricsServiceRequests of vLLM/DCGM-like series (gauges and
cumulative sums, 10 instances, a few attributes each), then times the accept path (decode, validate, fsynced
spool: what a 200 waits for) and the store path (the writer's INSERTs until every point is queryable).
Goal (issue 13): >= 200,000 points/s stored on this 2-core machine.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embedded import embedded_store  # noqa: E402

GOAL = 200_000
NAMES = ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "DCGM_FI_DEV_GPU_UTIL",
         "DCGM_FI_DEV_FB_USED", "vllm:num_preemptions_total", "vllm:prefix_cache_queries_total")


def build(points: int, per_request: int, now_ns: int) -> list[bytes]:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    bodies, made = [], 0
    while made < points:
        request = ExportMetricsServiceRequest()
        for instance in range(10):
            rm = request.resource_metrics.add()
            for key, value in (("service.name", "vllm-fleet"), ("service.instance.id", f"vllm-{instance}")):
                kv = rm.resource.attributes.add(key=key)
                kv.value.string_value = value
            sm = rm.scope_metrics.add()
            for name in NAMES:
                metric = sm.metrics.add(name=name)
                target = metric.sum if name.endswith("_total") else metric.gauge
                if name.endswith("_total"):
                    target.aggregation_temporality, target.is_monotonic = 2, True
                for i in range(per_request // (10 * len(NAMES))):
                    point = target.data_points.add(time_unix_nano=now_ns - (made + i) * 1_000_000,
                                                   start_time_unix_nano=now_ns - 10**12, as_double=float(i))
                    kv = point.attributes.add(key="model_name")
                    kv.value.string_value = "llama-3.1-8b"
        made += sum(len(getattr(m, m.WhichOneof("data")).data_points) for rm in request.resource_metrics
                    for sm in rm.scope_metrics for m in sm.metrics)
        bodies.append(request.SerializeToString())
    return bodies


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--points", type=int, default=400_000)
    p.add_argument("--per-request", type=int, default=2000)
    a = p.parse_args()
    with embedded_store("bench-metrics-"):
        return run(a)


def run(a) -> int:
    from ingest import metrics
    from projects.models import Project
    from store import client

    project, _ = Project.objects.get_or_create(name="bench")
    bodies = build(a.points, a.per_request, time.time_ns())
    writer = metrics.get_writer()
    t0 = time.perf_counter()
    accepted = sum(metrics.spool_metrics(project.pk, body).accepted for body in bodies)
    accept_s = time.perf_counter() - t0
    writer.flush(force=True)
    store_s = time.perf_counter() - t0
    stored = sum(client.query_rows(f"SELECT count() FROM {t}")[0][0]
                 for t in ("otel_metrics_gauge", "otel_metrics_sum"))
    metrics.stop_writer()
    print(f"metrics benchmark: {accepted:,} points in {len(bodies)} requests of ~{a.per_request:,} "
          f"({len(NAMES)} metrics x 10 instances)")
    print(f"accepted (decode, validate, fsynced spool): {accepted / accept_s:>10,.0f} points/s ({accept_s:.2f} s)")
    print(f"stored (queryable):                         {stored / store_s:>10,.0f} points/s ({store_s:.2f} s)   "
          f"goal >= {GOAL:,}  {'ok' if stored / store_s >= GOAL else 'MISSED'}")
    return 0 if stored == accepted else 1


if __name__ == "__main__":
    sys.exit(main())
