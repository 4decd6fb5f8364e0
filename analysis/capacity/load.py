"""Latency against load: the load at which a percentile crosses the objective (the knee), the headroom at peak, and
how sure that is. Pure: levels and the fleet's per-minute loads in, a LoadCurve out.
"""
from dataclasses import dataclass, field, replace

from analysis.capacity.objectives import Objective
from analysis.capacity.reads import LEVELS, Level
from analysis.wording import fmt

MIN_VALUES = 20  # a level's percentile is judged on at least this many values (below: shown, not judged)
NEAR = 0.15  # "near the knee": instance-minutes at levels whose load is within ±15 % of it
SURE = {"high": 30, "medium": 10}  # instance-minutes near the knee for each confidence; fewer: low

MEASURES = {  # measure -> (where it comes from, its unit)
    "in_flight": ("scheduler: the traces' admission to release", "sequences in flight per instance"),
    "running": ("engine running gauge", "sequences running per instance"),
    "rps": ("attempts started per second (no admission instants, no engine running gauge)",
            "requests/s per instance"),
}


@dataclass(frozen=True)
class LoadCurve:
    """The objective's percentile per load level and what it says.

    `levels`: [{"load", "minutes" (instance-minutes), "values", "value_ms"}] in load order; `knee_load`: the load at
    which the percentile reaches the objective (linear between the last level under it and the first at or over it,
    from where it stays over), None when no level crosses; `peak_load`: the fleet's largest minute (its mean load per
    instance); `headroom`: knee / peak - 1 (0.6: +60 % traffic before a breach; negative: past it at peak), or the
    lower bound `headroom_at_least` when the objective was never reached; `minutes_near_knee`: instance-minutes
    within NEAR of the knee, whence `confidence`."""
    measure: str
    objective: Objective
    percentile: int  # the percentile the levels show: the objective's, or the next computed one above it
    levels: list = field(default_factory=list)
    knee_load: float | None = None
    peak_load: float | None = None
    top_load: float | None = None
    headroom: float | None = None
    headroom_at_least: float | None = None
    minutes_near_knee: int = 0
    confidence: str | None = None
    cap: int | None = None  # the scheduler's concurrency cap per instance (llm.scheduler.cap), for the in_flight measure
    sentence: str = ""
    reason: str = ""  # why knee_load is None

    @property
    def source(self) -> str:
        return MEASURES[self.measure][0]

    @property
    def unit(self) -> str:
        return MEASURES[self.measure][1]

    def to_json(self) -> dict:
        return {"measure": self.measure, "source": self.source, "unit": self.unit,
                "objective": self.objective.to_json(), "metric": self.objective.metric, "percentile": self.percentile,
                "levels": self.levels, "knee_load": self.knee_load, "peak_load": self.peak_load,
                "top_load": self.top_load, "peak_share_of_knee": _ratio(self.peak_load, self.knee_load),
                "headroom": self.headroom, "headroom_at_least": self.headroom_at_least,
                "minutes_near_knee": self.minutes_near_knee, "confidence": self.confidence, "cap": self.cap,
                "knee_share_of_cap": _ratio(self.knee_load, self.cap),
                "sentence": self.sentence, "reason": self.reason or None}


def curve(measure: str, levels: list[Level], fleet: dict, objective: Objective, cap: int | None = None) -> LoadCurve:
    """The LoadCurve of `levels` (reads.load_levels) judged against `objective`; fleet: minute -> mean load per
    instance, whose largest is the peak; cap: the instances' concurrency cap, shown beside the knee (queues form
    before the minute's mean reaches it, so the knee lies below it)."""
    percentile = next((p for p in LEVELS if p >= objective.percentile), LEVELS[-1])
    points = [{"load": lv.load, "minutes": lv.latency[objective.metric]["minutes"],
               "values": lv.latency[objective.metric]["count"],
               "value_ms": lv.latency[objective.metric]["q"][percentile]} for lv in levels]
    base = LoadCurve(measure, objective, percentile, points, peak_load=max(fleet.values(), default=None),
                     top_load=max((lv.load for lv in levels), default=None), cap=cap)
    return _judged(base, [p for p in points if p["values"] >= MIN_VALUES and p["value_ms"] is not None])


def _judged(c: LoadCurve, judged: list[dict]) -> LoadCurve:
    threshold, label = c.objective.threshold_ms, c.objective.label
    reaches = f"the load at which {label} reaches {fmt(threshold, 'ms')}"
    if not judged:
        return _with(c, reason=f"no load level has {MIN_VALUES} {label.split()[0]} values to judge (not measured, "
                               f"or too little traffic)")
    if judged[-1]["value_ms"] < threshold:
        top = judged[-1]["load"]
        least = top / c.peak_load - 1 if c.peak_load else None
        reason = f"{label} stayed under {fmt(threshold, 'ms')} at every load seen, up to {fmt(top)} {c.unit}"
        after = f": at least {fmt(max(least, 0.0), '+%')} traffic before a breach" if least is not None else ""
        return _with(c, headroom_at_least=least, reason=reason, sentence=reason + after)
    crossing = next((i for i in range(len(judged) - 1, 0, -1) if judged[i - 1]["value_ms"] < threshold), None)
    if crossing is None:
        reason = (f"{label} is over {fmt(threshold, 'ms')} at every load seen, down to {fmt(judged[0]['load'])} "
                  f"{c.unit}: the objective is missed without load, which more capacity does not fix")
        return _with(c, reason=reason, sentence=reason)
    below, over = judged[crossing - 1], judged[crossing]
    knee = below["load"] + (threshold - below["value_ms"]) / (over["value_ms"] - below["value_ms"]) * (
        over["load"] - below["load"])
    near = sum(p["minutes"] for p in c.levels if abs(p["load"] - knee) <= NEAR * knee)
    sure = next((name for name, least in SURE.items() if near >= least), "low")
    return _with(c, knee_load=knee, minutes_near_knee=near, confidence=sure,
                 headroom=knee / c.peak_load - 1 if c.peak_load else None,
                 sentence=_headroom(c.peak_load, knee, reaches, c.unit, near, sure))


def _headroom(peak: float | None, knee: float, reaches: str, unit: str, near: int, sure: str) -> str:
    """"peak used 62% of the load at which TTFT p95 reaches 1 s (14.2 sequences in flight per instance): +60%
    traffic before a breach; seen for 42 instance-minutes near that load (high confidence)"."""
    where = f"{reaches} ({fmt(knee)} {unit})"
    seen = f"seen for {near} instance-minute{'s' if near != 1 else ''} near that load ({sure} confidence)"
    if not peak:
        return f"{where[0].upper()}{where[1:]}; {seen}"
    share = peak / knee
    if share < 1:
        return f"peak used {fmt(share, '%')} of {where}: {fmt(1 / share - 1, '+%')} traffic before a breach; {seen}"
    return f"peak reached {fmt(share, '%')} of {where}: past it at peak; {seen}"


def _with(c: LoadCurve, **changes) -> LoadCurve:
    return replace(c, **changes)


def _ratio(a, b):
    return None if a is None or not b else a / b
