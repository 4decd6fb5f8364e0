"""The serving engine's metrics of one service window: per instance-minute series and the Engine summary.

Two reads (gauges, counters) over the otel_metrics_* tables through the names of analysis.engines; a signal
without a series is None, never 0. Counters become increases per minute (resets handled in the SQL).
"""
import statistics
from collections import defaultdict
from dataclasses import dataclass, fields
from datetime import datetime, timezone

from analysis import engines
from analysis.evidence_types import Engine
from analysis.scope import Scope
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client

EMPTY_QUEUE = 0.5  # a minute whose mean waiting requests are under this had an empty queue


@dataclass(frozen=True)
class EngineMinute:
    instance: str
    minute: datetime
    queue_depth: float | None = None
    in_flight: float | None = None
    kv_cache_usage: float | None = None
    preemptions_per_min: float | None = None
    prefix_cache_hit_rate: float | None = None
    gpu_utilization: float | None = None
    gpu_memory_used_bytes: float | None = None
    gpu_memory_free_bytes: float | None = None
    restarts: float | None = None
    process_start_at: float | None = None  # unix seconds


SIGNAL_FIELDS = {"preemptions": "preemptions_per_min", "process_start": "process_start_at"}


def _read(name: str, scope: Scope) -> list[tuple]:
    names = [n for spelled in engines.names_by_signal().values() for n in spelled]
    return client.query_rows(_sql(name), parameters={
        "project_id": scope.project_id, "service": scope.service, "start": utc_naive(scope.start),
        "end": utc_naive(scope.end), "names": names})


def instance_minutes(scope: Scope) -> list[EngineMinute]:
    """Per (instance, minute) engine signals of the scope's service (its route and tenant do not apply to an
    engine's metrics), ordered by instance then minute; [] when none were sent."""
    return _minutes_and_names(scope)[0]


def _minutes_and_names(scope: Scope) -> tuple[list[EngineMinute], set]:
    cells: dict = defaultdict(dict)  # (instance, minute) -> {signal: value}
    counts: dict = defaultdict(dict)
    names = set()
    for instance, minute, name, value, _peak in _read("engine_gauges", scope):
        _put(cells[(instance, minute)], name, value)
        names.add(name)
    for instance, minute, name, value in _read("engine_counters", scope):
        _put(counts[(instance, minute)], name, value)
        names.add(name)
    out = []
    for key in sorted(set(cells) | set(counts)):
        values, counted = cells.get(key, {}), counts.get(key, {})
        rate = _hit_rate(counted)
        if rate is not None:
            values["prefix_cache_hit_rate"] = rate
        values.update({k: v for k, v in counted.items() if k in ("preemptions", "restarts")})
        known = {f.name for f in fields(EngineMinute)}
        out.append(EngineMinute(key[0], key[1].replace(tzinfo=timezone.utc),
                                **{SIGNAL_FIELDS.get(k, k): v for k, v in values.items()
                                   if SIGNAL_FIELDS.get(k, k) in known}))
    return out, names


def _put(cell: dict, name: str, value: float) -> None:
    hit = engines.source_of(name)
    if hit is not None and value == value:
        signal, source = hit
        cell[signal] = cell.get(signal, 0.0) + value * source.scale if source.read == engines.COUNTER \
            else value * source.scale


def _hit_rate(counted: dict) -> float | None:
    queries, hits = counted.get("prefix_cache_queries"), counted.get("prefix_cache_hits")
    return hits / queries if queries and hits is not None else None


def summary(scope: Scope) -> Engine:
    """The Engine evidence of the scope's service and window (analysis.evidence_types.Engine)."""
    minutes, names = _minutes_and_names(scope)
    if not minutes:
        return Engine()

    def values(name):
        return [getattr(m, name) for m in minutes if getattr(m, name) is not None]

    kv, waiting, gpu = values("kv_cache_usage"), values("queue_depth"), values("gpu_utilization")
    memory = [(m.gpu_memory_used_bytes / (m.gpu_memory_used_bytes + m.gpu_memory_free_bytes),
               m.gpu_memory_used_bytes, m.gpu_memory_used_bytes + m.gpu_memory_free_bytes) for m in minutes
              if m.gpu_memory_used_bytes is not None and m.gpu_memory_free_bytes
              and m.gpu_memory_used_bytes + m.gpu_memory_free_bytes > 0]
    fullest = max(memory, default=(None, None, None))  # the instance-minute nearest to running out
    starts = _process_starts(minutes, scope.start, scope.end)
    return Engine(
        sources=list(engines.engines(names)), instances=len({m.instance for m in minutes}),
        kv_cache_usage_p95=_quantile(kv, 0.95), kv_cache_usage_max=max(kv) if kv else None,
        preemptions_per_min=_per_minute(minutes, "preemptions_per_min"),
        preemption_growth=_growth(minutes, scope.start, scope.end),
        prefix_cache_hit_rate=_mean(values("prefix_cache_hit_rate")),
        gpu_utilization_mean=_mean(gpu), gpu_memory_used_share_max=fullest[0],
        gpu_memory_used_bytes_at_max=fullest[1], gpu_memory_total_bytes_at_max=fullest[2],
        restarts=_restarts(minutes),
        process_starts=starts, queue_depth_mean=_mean(waiting),
        queue_empty_share=sum(w < EMPTY_QUEUE for w in waiting) / len(waiting) if waiting else None,
        in_flight_mean=_mean(values("in_flight")))


def _restarts(minutes) -> int | None:
    """Container restarts (kube-state) plus process starts of an instance after its first one in the window (a
    changed process_start_time_seconds); None when neither is sent. An instance's first start is a cold start
    (scale-out), not a restart."""
    counted = [m.restarts for m in minutes if m.restarts is not None]
    starts = defaultdict(set)
    for m in minutes:
        if m.process_start_at is not None:
            starts[m.instance].add(round(m.process_start_at))
    if not counted and not starts:
        return None
    return int(round(sum(counted))) + sum(len(s) - 1 for s in starts.values())


def _process_starts(minutes, start, end) -> list:
    """(instance, ISO instant) of each distinct process start inside [start, end)."""
    lo, hi = start.timestamp(), end.timestamp()
    seen = {}
    for m in minutes:
        if m.process_start_at is not None and lo <= m.process_start_at < hi:
            seen.setdefault((m.instance, round(m.process_start_at)), m.process_start_at)
    return [[instance, datetime.fromtimestamp(at, timezone.utc).isoformat()] for (instance, _), at in sorted(seen.items())]


def _mean(values) -> float | None:
    return statistics.fmean(values) if values else None


def _quantile(values, q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _per_minute(minutes, name: str) -> float | None:
    """A counter's rate over the window summed over instances: increases over the minutes they cover."""
    by_minute = defaultdict(float)
    seen = False
    for m in minutes:
        if getattr(m, name) is not None:
            by_minute[m.minute] += getattr(m, name)
            seen = True
    return sum(by_minute.values()) / len(by_minute) if seen else None


def _growth(minutes, start, end) -> float | None:
    middle = start + (end - start) / 2
    first = _per_minute([m for m in minutes if m.minute < middle], "preemptions_per_min")
    second = _per_minute([m for m in minutes if m.minute >= middle], "preemptions_per_min")
    return second - first if first is not None and second is not None else None


def scheduler_from_metrics(scope: Scope, caps: dict | None = None) -> dict:
    """gap_fraction and queue depth from the engine's gauges, for services whose traces carry no queued/admitted.

    {"service": gap_fraction pooled over instances (None without a sample with requests waiting), "instances":
    {instance: {"gap_fraction", "backlog_samples", "samples", "cap", "cap_source", "queue_depth_mean",
    "in_flight_mean"}}, "interval_s": the median spacing of samples}. A sample is backlogged when requests wait,
    and under its cap when fewer than cap run; cap is the traces' llm.scheduler.cap of the instance (`caps`), else
    the most requests the instance was seen running ("observed"). Sampling error: a backlog shorter than the
    interval can fall between two samples (docs/sending-traces.md "7. Engine and GPU metrics").
    """
    names = engines.names_by_signal()
    rows = client.query_rows(_sql("engine_scheduler_samples"), parameters={
        "project_id": scope.project_id, "service": scope.service, "start": utc_naive(scope.start),
        "end": utc_naive(scope.end), "waiting": list(names["queue_depth"]), "running": list(names["in_flight"])})
    by_instance = defaultdict(list)
    for instance, at, waiting, running in rows:
        by_instance[instance].append((at, waiting, running))
    out, gaps, spacing = {}, [0, 0], []
    for instance, samples in by_instance.items():
        known = (caps or {}).get(instance)
        cap = known if known is not None else max(r for _, _, r in samples)
        backlog = [(w, r) for _, w, r in samples if w > 0]
        under = sum(1 for _, r in backlog if r < cap)
        gaps[0], gaps[1] = gaps[0] + under, gaps[1] + len(backlog)
        spacing += [(b[0] - a[0]).total_seconds() for a, b in zip(samples, samples[1:])]
        out[instance] = {"gap_fraction": under / len(backlog) if backlog else None, "backlog_samples": len(backlog),
                         "samples": len(samples), "cap": cap, "cap_source": "traces" if known is not None else "observed",
                         "queue_depth_mean": statistics.fmean(w for _, w, _ in samples),
                         "in_flight_mean": statistics.fmean(r for _, _, r in samples)}
    return {"service": gaps[0] / gaps[1] if gaps[1] else None, "instances": out,
            "interval_s": statistics.median(spacing) if spacing else None}
