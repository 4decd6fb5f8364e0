"""The Engine page's numbers: the serving engine's own metrics per instance (KV cache, running/waiting, preemptions,
GPU utilisation and memory, restarts) beside TTFT p95 per minute; "not measured" when the service sends none."""
from dataclasses import dataclass

from analysis.evidence_types import Engine as EngineEvidence
from analysis.reads import engine_series, queries
from analysis.reads.engine_series import EngineMinute
from analysis.scope import Scope
from store.concurrent import gather


@dataclass(frozen=True)
class Engine:
    """minutes: every instance's engine_series.instance_minutes; ttft: queries.churn_windows' minutes (TTFT p95);
    instances: the instances with metrics; instance: the one asked for ("" for all, or when it has no metrics in
    the window); shown: its minutes; summary: the diagnosis's Engine evidence, None without metrics."""
    minutes: list[EngineMinute]
    ttft: list[dict]
    instances: list[str]
    instance: str
    shown: list[EngineMinute]
    summary: EngineEvidence | None


def build(scope: Scope, instance: str = "") -> Engine:
    # side by side on the reader threads (store/concurrent.py); the engine's metrics are the whole service's
    minutes, ttft = gather(lambda: engine_series.instance_minutes(scope) if scope.service else [],
                           lambda: queries.churn_windows(scope) if scope.service else [])
    instances = sorted({m.instance for m in minutes})
    instance = instance if instance in instances else ""  # an instance without metrics in the window: all of them
    return Engine(minutes=minutes, ttft=ttft, instances=instances, instance=instance,
                  shown=[m for m in minutes if m.instance == instance] if instance else minutes,
                  summary=engine_series.summary(scope) if minutes else None)
