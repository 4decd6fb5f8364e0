"""Rows of the Scheduler and Connections pages, shaped from analysis.reads.queries' scheduler sweep and churn windows.

The numbers the diagnosis reads (gap_fraction, the churn correlations) are not recomputed here: the views take
them from analysis.diagnosis.evidence, so the page and the verdict always agree.
"""
from datetime import timedelta

from analysis.evidence_types import GapFraction
from analysis.stats import pairs, ratio
from analysis.scope import Scope

MAX_INSTANCE_CHARTS = 12


def label(instance: str) -> str:
    return instance or "(no instance id)"


def instance_summary(rows: list[dict], gaps: GapFraction) -> tuple[list[dict], dict | None]:
    """(instances, others). instances: per instance, most backlog first (then most in-flight time): cap,
    gap_fraction and backlog_seconds from evidence.gap_fraction (`gaps`), and from the sweep rows gap_seconds,
    queue_max, in_flight_max, in_flight_mean. others: the same for the instances a bounded sweep pooled (maxima over
    all of them, "values": how many), None when it pooled none."""
    acc = {}
    for r in rows:
        a = acc.setdefault(r["instance"], {"gap_ms": 0.0, "in_flight_ms": 0.0, "covered_ms": 0.0, "queue_max": 0,
                                           "in_flight_max": 0})
        for key in ("gap_ms", "in_flight_ms", "covered_ms"):
            a[key] += r[key]
        a["queue_max"] = max(a["queue_max"], r["queue_max"] or 0)
        a["in_flight_max"] = max(a["in_flight_max"], r["in_flight_max"] or 0)
    out = [{"instance": name, **gaps.instances[name].to_json(), "gap_seconds": a["gap_ms"] / 1000,
            "queue_max": a["queue_max"], "in_flight_max": a["in_flight_max"],
            "in_flight_mean": ratio(a["in_flight_ms"], a["covered_ms"]), "in_flight_ms": a["in_flight_ms"]}
           for name, a in acc.items()]
    for s in out:
        s["label"] = f"others ({s['values']} instances, pooled)" if s["values"] else label(s["instance"])
    instances = sorted((s for s in out if not s["values"]),
                       key=lambda i: (-i["backlog_seconds"], -i["in_flight_ms"], i["instance"]))
    return instances, next((s for s in out if s["values"]), None)


def instance_series(rows: list[dict], instance: str, width_ms: int) -> list[dict]:
    """One instance's buckets in time order: {"start", "end", "queue", "in_flight" (time-weighted means over the
    covered part of the bucket), "queue_max", "in_flight_max", "cap", "gap_ms", "backlog_ms"}. Buckets the
    instance's state does not cover (the zero-length step of its last event) are left out: nothing was seen."""
    width = timedelta(milliseconds=width_ms)
    return [{"start": r["bucket_start"], "end": r["bucket_start"] + width,
             "queue": ratio(r["queue_ms"], r["covered_ms"]), "in_flight": ratio(r["in_flight_ms"], r["covered_ms"]),
             "queue_max": r["queue_max"], "in_flight_max": r["in_flight_max"], "cap": r["cap"],
             "gap_ms": r["gap_ms"], "backlog_ms": r["backlog_ms"]}
            for r in rows if r["instance"] == instance and r["covered_ms"] > 0]


def backlog_series(rows: list[dict], width_ms: int) -> list[dict]:
    """Per bucket, summed over instances: {"start", "end", "at_cap_ms", "gap_ms", "unknown_ms"}: backlog time
    with every slot busy, with slots idle (under cap), and on instances without a known cap; in time order.
    Sums of time, not of queues: each instance's queue stays its own."""
    width, acc = timedelta(milliseconds=width_ms), {}
    for r in filter(lambda r: r["covered_ms"] > 0, rows):
        a = acc.setdefault(r["bucket_start"], {"start": r["bucket_start"], "end": r["bucket_start"] + width,
                                               "at_cap_ms": 0.0, "gap_ms": 0.0, "unknown_ms": 0.0})
        # uncapped_backlog_ms: the row's backlog while its cap was unknown (part of a pooled row's, all of an
        # uncapped instance's); gap time needs a cap, so it is never part of it
        a["unknown_ms"] += r["uncapped_backlog_ms"]
        a["at_cap_ms"] += r["backlog_ms"] - r["gap_ms"] - r["uncapped_backlog_ms"]
        a["gap_ms"] += r["gap_ms"]
    return [acc[k] for k in sorted(acc)]


def trend_line(points: list[dict], x: str, y: str, slope) -> tuple[list[float], list[float]] | None:
    """The least-squares line through (x, y) with evidence's slope, drawn across the points' x range."""
    xs, ys = pairs(points, x, y)
    if slope is None or not xs:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    ends = [min(xs), max(xs)]
    return ends, [my + slope * (v - mx) for v in ends]


def from_engine(project_id: int, service: str, start, end, gaps) -> dict | None:
    """The engine's own view of its queue (its gauges, sampled), beside the traces' sweep: gap_fraction and a
    per-minute chart of waiting and running per instance; None when the engine sends no such gauges."""
    from analysis.reads import engine_series
    from dashboard import charts

    caps = {name: gap.cap for name, gap in gaps.instances.items() if gap.cap is not None}
    sampled = engine_series.scheduler_from_metrics(Scope(project_id, service, start, end), caps)
    if not sampled["instances"]:
        return None
    minutes = engine_series.instance_minutes(Scope(project_id, service, start, end))
    return {**sampled, "chart": ("engine-queue", charts.engine_queue_chart(minutes, (start, end)))}
