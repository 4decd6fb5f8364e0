"""The Scheduler page's numbers: each instance's queue depth, in-flight and cap over time, and gap_fraction (backlog
while slots sat idle), from the scheduler sweep; beside it the engine's own view of its queue when it sends one.

The sweep is the instance's whole state, so the scope's route and tenant do not apply. gap_fraction is
analysis.diagnosis.evidence's, so the page, the alert kind and the verdict always agree.
"""
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings

from analysis.diagnosis import evidence
from analysis.diagnosis.thresholds import configured
from analysis.evidence_types import GapFraction
from analysis.reads import engine_series, queries
from analysis.scope import Scope
from analysis.stats import ratio, series_width_ms

MAX_INSTANCE_CHARTS = 12
SERIES_POINTS = 150


@dataclass(frozen=True)
class Gaps:
    """The sweep's instance rows (queries.scheduler_sweep) and the gap_fraction the diagnosis reads of them."""
    rows: list[dict]
    fraction: GapFraction


@dataclass(frozen=True)
class Scheduler:
    """width_ms: the sweep's bucket; instances / others: instance_summary(); shown: the MAX_INSTANCE_CHARTS first
    instances with their instance_series(); hidden: how many instances are not shown (pooled ones included);
    uncapped: the instances without a known cap; backlog: backlog_series(); engine: the engine's gauges'
    gap_fraction (from_engine), None when it sends none; threshold: the diagnosis's gap_fraction threshold."""
    width_ms: int
    gaps: GapFraction
    instances: list[dict]
    others: dict | None
    shown: list[tuple[dict, list[dict]]]
    hidden: int
    uncapped: list[dict]
    backlog: list[dict]
    engine: dict | None
    threshold: float


def label(instance: str) -> str:
    return instance or "(no instance id)"


def gaps(scope: Scope, width_ms: int, limit: int | None = None) -> Gaps:
    rows = queries.scheduler_sweep(scope, width_ms, limit=limit)["instances"]
    return Gaps(rows=rows, fraction=evidence.gap_fraction(rows))


def build(scope: Scope) -> Scheduler:
    width = series_width_ms((scope.end - scope.start).total_seconds() * 1000, points=SERIES_POINTS)
    swept = gaps(scope, width, settings.ANALYSIS_TOP_N)
    instances, others = instance_summary(swept.rows, swept.fraction)
    shown = [(s, instance_series(swept.rows, s["instance"], width)) for s in instances[:MAX_INSTANCE_CHARTS]]
    return Scheduler(width_ms=width, gaps=swept.fraction, instances=instances, others=others, shown=shown,
                     hidden=len(instances) - len(shown) + (others["values"] if others else 0),
                     uncapped=[s for s in instances if s["cap"] is None], backlog=backlog_series(swept.rows, width),
                     engine=from_engine(scope, swept.fraction), threshold=configured().gap_fraction)


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


def from_engine(scope: Scope, gaps: GapFraction) -> dict | None:
    """The engine's own view of its queue (its gauges, sampled), beside the traces' sweep: gap_fraction per
    instance (engine_series.scheduler_from_metrics) and "minutes", its per-minute gauges; None when the engine
    sends no such gauges."""
    caps = {name: gap.cap for name, gap in gaps.instances.items() if gap.cap is not None}
    sampled = engine_series.scheduler_from_metrics(scope, caps)
    if not sampled["instances"]:
        return None
    return {**sampled, "minutes": engine_series.instance_minutes(scope)}
