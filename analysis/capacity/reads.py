"""The capacity worksheet's reads: one function per analysis/sql/capacity_*.sql file, typed rows out.

Every read covers one project's service and the window [start, end) (naive datetimes are UTC). A run (one logical
request) is counted in the minute its first attempt was queued; an attempt in the minute it was queued. Instances
are the traces' (service.instance.id) and the metrics' (the same key, analysis/engines.py). Unknown is None or an
empty value, never 0.
"""
from dataclasses import dataclass
from datetime import datetime, timezone

from analysis import engines
from analysis.sql_files import sql as _sql
from analysis.stats import finite
from analysis.windows import utc_naive
from store import client

RUNNING = engines.names_by_signal()["in_flight"]  # the engine's running gauge (vLLM, SGLang, TGI spellings)
LEVELS = (50, 90, 95, 99)  # the percentiles capacity_load_levels.sql computes per load level
MEASURES = ("in_flight", "running", "rps")


def _params(project_id, service, start, end, route="", **more) -> dict:
    return {"project_id": project_id, "service": service, "start": utc_naive(start), "end": utc_naive(end),
            "route": route, "tenant": "", **more}


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class Labels:
    """What an instance's resource says: its region ('' unknown), gpu.count (0 unknown), GPUs its DCGM series name."""
    instance: str
    region: str
    gpu_count: int
    dcgm_gpus: int


def instance_labels(project_id, service, start, end) -> dict[str, Labels]:
    """instance -> Labels, for every instance with attempt spans or engine metrics in the window."""
    rows = client.query_rows(_sql("capacity_instance_labels"), parameters=_params(project_id, service, start, end))
    return {r[0]: Labels(r[0], r[1], int(r[2]), int(r[3])) for r in rows}


def _regions(labels: dict[str, Labels]) -> dict:
    """The instance -> region arrays the rate and token reads map attempts with."""
    return {"instances": list(labels), "regions": [label.region for label in labels.values()]}


@dataclass(frozen=True)
class Minute:
    region: str
    minute: datetime
    runs: int
    attempts: int


def rates(project_id, service, start, end, labels: dict[str, Labels], route="") -> list[Minute]:
    """Runs and attempts started per (region, minute) with any; region '' for instances without cloud.region."""
    rows = client.query_rows(_sql("capacity_rates"),
                             parameters=_params(project_id, service, start, end, route, **_regions(labels)))
    return [Minute(r[0], _utc(r[1]), int(r[2]), int(r[3])) for r in rows]


@dataclass(frozen=True)
class Counts:
    """Runs and attempts of a scope (the service, a region or an instance), with the runs' token counts."""
    runs: int
    attempts: int
    admitted: int  # attempts with an admission instant: the scheduler's view of in flight
    cap: int | None  # the largest llm.scheduler.cap the attempts report
    first_run_at: datetime | None
    last_run_at: datetime | None
    tokens_in: tuple  # (mean, p95, runs carrying it)
    tokens_out: tuple


NO_COUNTS = Counts(0, 0, 0, None, None, None, (None, None, 0), (None, None, 0))


def counts(project_id, service, start, end, labels: dict[str, Labels], route="") -> dict:
    """{"service": Counts, "regions": {region: Counts}, "instances": {instance: Counts}} (instances with attempts of
    the route in the window). Token means and p95 are None where no run carries the count."""
    rows = client.query(_sql("capacity_tokens"),
                        parameters=_params(project_id, service, start, end, route, **_regions(labels)))
    out = {"service": NO_COUNTS, "regions": {}, "instances": {}}
    for r in rows:
        runs = int(r["runs"])
        found = Counts(runs, int(r["attempts"]), int(r["admitted"]), None if r["cap"] is None else int(r["cap"]),
                       _utc(r["first_run_at"]) if runs else None, _utc(r["last_run_at"]) if runs else None,
                       _tokens(r, "tokens_in"), _tokens(r, "tokens_out"))
        if r["by_region"]:
            out["regions"][r["region"]] = found
        elif r["by_instance"]:
            out["instances"][r["instance"]] = found
        else:
            out["service"] = found
    return out


def _tokens(row: dict, name: str) -> tuple:
    count = int(row[f"{name}_count"])
    return (finite(row[f"{name}_mean"]) if count else None, finite(row[f"{name}_p95"]) if count else None, count)


@dataclass(frozen=True)
class Activity:
    """An instance's time up and how busy it was (see capacity_instance_activity.sql)."""
    instance: str
    active_seconds: float
    busy_in_flight_ms: float  # sequences x ms in flight over its busy minutes (traces)
    busy_ms: float
    running_sum: float  # the engine's running gauge: samples above 0, summed
    running_busy: int
    running_samples: int


def activity(project_id, service, start, end) -> dict[str, Activity]:
    """instance -> Activity, for every instance with attempts in flight or engine samples in the window."""
    rows = client.query_rows(_sql("capacity_instance_activity"),
                             parameters=_params(project_id, service, start, end, running=list(RUNNING)))
    return {r[0]: Activity(r[0], float(r[1]), float(r[2]), float(r[3]), float(r[4]), int(r[5]), int(r[6]))
            for r in rows}


@dataclass(frozen=True)
class Level:
    """One load level: its instance-minutes, their mean load, and the latency of the attempts queued in them
    ({percentile: ms} and how many values, per metric "ttft" and "total")."""
    level: int
    minutes: int
    load: float
    latency: dict  # metric -> {"q": {50: ms, ...}, "count": values, "minutes": instance-minutes with a value}


def load_levels(project_id, service, start, end, measure: str, bins: int, route="") -> tuple[list[Level], dict]:
    """([Level] in load order, {minute: the fleet's mean load per instance}) in the measure ("in_flight",
    "running" or "rps"; see capacity_load_levels.sql). Levels without an instance-minute are absent."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    rows = client.query(_sql("capacity_load_levels"), parameters=_params(
        project_id, service, start, end, route, measure=measure, bins=bins, running=list(RUNNING)))
    levels, fleet = [], {}
    for r in rows:
        if r["is_level"]:
            levels.append(Level(int(r["level"]), int(r["minutes"]), float(r["mean_load"]),
                                {metric: _latency(r, metric) for metric in ("ttft", "total")}))
        else:
            fleet[int(r["m"])] = float(r["mean_load"])
    return sorted(levels, key=lambda level: level.level), fleet


def _latency(row: dict, metric: str) -> dict:
    count = int(row[f"{metric}_values"])
    return {"q": {p: (finite(q) if count else None) for p, q in zip(LEVELS, row[f"{metric}_q"])}, "count": count,
            "minutes": int(row[f"{metric}_minutes"])}
