"""Onsets and ends of incidents on a service's per-minute series (pure: the reads are in jobs.py).

A minute with at least incident_min_attempts attempts is judged; quieter minutes are neither off nor normal and
are skipped. A judged minute is *off* when any metric (a bucket, ttft, total) with enough known values has a p95
above its baseline median by all three of: a factor, k robust deviations (1.4826 x MAD) and an absolute floor
(a share of the baseline's TTFT p95, at least a few tens of ms), so noise and tiny buckets (t_queue 0 -> 5 ms)
never count. A metric the spans cannot give has no known values and never departs. A gateway whose calls were seen
at two layers has one metric more, t_gateway (baseline.METRICS; jobs._series adds it to its whole-service series).

An incident opens at the first of incident_persist_minutes consecutive off minutes (its onset) and keeps the
baseline of that minute and the metrics that were off in most of those minutes (its *own* metrics). While it is
open a minute is off only when one of its own metrics is: the per-minute TTFT p95 of a mixed prompt population is
spiky (a long prompt more or less in the top 5 % of ~100 requests), and a post-processing incident must not stay
open on TTFT spikes it never had; nor is a minute still off once its own metrics are back nearer the baseline than
the incident (Levels.bar). It closes at the first normal minute from which incident_persist_minutes normal minutes come
with at most CLOSING_SPIKES off minutes among them (lone spikes do not keep it open either); that minute is its
end, and its closing minutes are judged again with nothing open (one may start the next incident). Its onset then
moves to the first of incident_persist_minutes minutes in a row nearer the incident than the baseline (settle). A
closed stretch shorter than incident_min_minutes is dropped as a blip; an open one is reported once it has lasted
incident_open_minutes (its persistence: stored within about 4 minutes of its onset; a blip-to-be is then retired
when it closes, and the alert rules' minimum duration keeps it from alerting). Still off, or not yet back for long
enough, when the series ends: ongoing, end None. An open incident whose service sends nothing for
incident_silence_minutes closes with the last minute that had traffic (end_reason "silence").

A slice's series (a route's, a tenant's, an instance's) is judged the same way on its per-minute p50s instead
(SLICE_LEVEL), and its incidents that overlap one of its whole service's are left out (beside), that one lasting
as long as they do (outlast).

The walk is sequential, but most of its minutes (no incident open, no run of off minutes, nothing skipped in their
baseline's span) are decided by one numpy pass over every judged minute against its baseline with nothing skipped
(off_minutes: the same rule as off_metric, for arrays).
"""
import bisect
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from analysis import buckets
from analysis.diagnosis.thresholds import Thresholds
from analysis.incidents.baseline import COLUMNS, METRICS, Baseline, Chooser, matrix
from analysis.incidents.baseline import value as at

MAD_SCALE = 1.4826  # MAD x this estimates the standard deviation of normal data
MINUTE = timedelta(minutes=1)
# Lone spikes among the normal minutes that close an incident: TTFT p95 of a mixed prompt population passes a
# doubling in about one healthy minute in six, which must not keep an incident open for ever.
CLOSING_SPIKES = 2
# A healthy minute's TTFT p95 passes a doubling of its baseline median about once in six and 2.5x rarely: a minute
# above 2.5x is never "back", nor a spike before an onset (the cap of Levels.bar). Chosen on an offline sweep like
# tests/analysis/measure_incident_alignment.py (1,400 case-alignments): 61 wrong with 2.5, 59 with 3, 77 before.
SPIKE_RATIO = 2.5
# A slice (route, tenant, instance) is judged on its per-minute medians: a minor route has ~10-40 attempts a minute,
# whose p95 is about their maximum, and a slice's own change (a slow retriever, a far region, a sick instance) moves
# its typical request.
# On tests/analysis/measure_incident_alignment.py's 1,040 case-alignments, routes judged on p95s found the slow minor
# route in 38 of 40 but made 20 false incidents on healthy services (55 -> 70 wrong); on p50s 40 of 40 and none
# (55 -> 29 wrong). Tenants and instances judged too: the same there, and 94 -> 22 wrong of 360 on other scopes
# (preprocessing for a 10 % tenant, long prompts on one instance of three). docs/incidents.md "Where the minute boundaries fall".
SLICE_LEVEL = "p50"
SLICES = ("route", "tenant", "instance")  # the dimensions whose values are judged on their own, in this order
MAX_SLICES = 8  # values judged per service and dimension (the busiest): each costs a walk of its own


@dataclass
class Found:
    """A detected incident: [start, end) (end None while ongoing), its baseline, its minutes' series points."""

    start: datetime
    baseline: Baseline
    end: datetime | None = None
    points: list = field(default_factory=list)
    own: tuple = METRICS  # the metrics that keep it open (own_metrics)
    level: str = "p95"  # the per-minute quantile it was judged on (detect)
    slice: dict | None = None  # {"dimension", "value"}: found on a tenant's or an instance's own series (jobs.py)
    end_reason: str | None = None  # "silence": closed because the service stopped sending (detect)

    def departed(self, th: Thresholds) -> list[str]:
        """The metrics off in at least one of the incident's minutes, the most off minutes first."""
        counts = {m: sum(1 for p in self.points if off_metric(p, m, self.baseline, th, self.level))
                  for m in METRICS}
        return sorted((m for m, n in counts.items() if n), key=lambda m: -counts[m])

    def peak(self) -> dict:
        """{"buckets": {bucket: {"p95", "at"}}, "ttft": {...}, "total": {...}}: each metric's worst minute p95 inside
        the incident (ms, ISO Z minute); None for both when it was not measured."""
        def worst(metric):
            known = [p for p in self.points if p[metric]["count"] and p[metric]["p95"] is not None]
            if not known:
                return {"p95": None, "at": None}
            top = max(known, key=lambda p: p[metric]["p95"])
            return {"p95": round(top[metric]["p95"], 3), "at": top["at"].strftime("%Y-%m-%dT%H:%M:%SZ")}
        return {"buckets": {name: worst(name) for name in buckets.PARTS},
                "ttft": worst("ttft"), "total": worst("total")}


@dataclass
class Detection:
    """What a walk over a stretch found: the incidents, how many minutes it judged and which of them had no
    baseline."""

    incidents: list[Found]
    judged: int = 0
    no_baseline_minutes: list = field(default_factory=list)

    @property
    def no_baseline(self) -> int:
        return len(self.no_baseline_minutes)


def floor_ms(baseline: Baseline, th: Thresholds, level: str = "p95") -> float:
    """The least growth that counts: a share of the baseline's TTFT p95 (else total p95; p50s when judging p50s),
    at least floor_ms. TRICKY: not of total: a long-streaming service (total p95 ~10 s) would need a second more to
    its ~250 ms TTFT before a doubled network hop or connection churn counted."""
    reference = baseline.median("ttft", level)
    reference = baseline.median("total", level) if reference is None else reference
    return th.incident_floor_ms if reference is None else max(th.incident_floor_ms, th.incident_floor_share * reference)


def off_metric(point: dict, metric: str, baseline: Baseline, th: Thresholds, level: str = "p95") -> bool:
    """Whether the minute's p95 (or `level`) of `metric` is above its baseline by the factor, the deviations and
    the floor."""
    value, stats = at(point, metric), baseline.stats.get(metric)
    if stats is None or value["count"] < th.incident_min_attempts or value[level] is None:
        return False
    median, spread = stats[level]
    # TRICKY: the deviation term is capped at a doubling: a spiky baseline (TTFT p95 of a mixed prompt population)
    # has a MAD so wide that k x MAD would hide a doubled p95, which must always count; persistence filters spikes.
    deviation = min(median + th.incident_mad_k * MAD_SCALE * spread, 2 * median)
    limit = max(median * th.incident_factor, deviation, median + floor_ms(baseline, th, level))
    return value[level] > limit


def is_off(point: dict, baseline: Baseline, th: Thresholds, level: str = "p95") -> bool:
    return any(off_metric(point, metric, baseline, th, level) for metric in METRICS)


def off_minutes(values: np.ndarray, center: np.ndarray, spread: np.ndarray, th: Thresholds,
                level: str = "p95") -> np.ndarray:
    """is_off of many minutes at once, each against its own baseline: values (baseline.matrix of the points),
    center and spread (medians and MADs, Chooser.prepare's) are minutes x baseline.COLUMNS, NaN where unknown.
    The same rule as off_metric and floor_ms, written for arrays (tested equal to them); a NaN compares false."""
    column = {key: n for n, key in enumerate(COLUMNS)}
    picked = [column[metric, level] for metric in METRICS]
    median, deviation, value = center[:, picked], spread[:, picked], values[:, picked]
    reference = center[:, column["ttft", level]]
    reference = np.where(np.isnan(reference), center[:, column["total", level]], reference)
    floor = np.where(np.isnan(reference), th.incident_floor_ms,
                     np.maximum(th.incident_floor_ms, th.incident_floor_share * reference))
    capped = np.minimum(median + th.incident_mad_k * MAD_SCALE * deviation, 2 * median)
    limit = np.maximum(np.maximum(median * th.incident_factor, capped), median + floor[:, None])
    with np.errstate(invalid="ignore"):
        return (value > limit).any(axis=1)


def own_metrics(onset: list[dict], baseline: Baseline, th: Thresholds, level: str = "p95") -> tuple:
    """The metrics off in most of an incident's onset minutes (at least one: the most often off)."""
    counts = {m: sum(1 for p in onset if off_metric(p, m, baseline, th, level)) for m in METRICS}
    most = [m for m, n in counts.items() if 2 * n > len(onset)]
    return tuple(most) or (max(counts, key=counts.get),)


def still_off(point: dict, baseline: Baseline, th: Thresholds, own: tuple, bar: dict, level: str = "p95") -> bool:
    """Whether one of an incident's own metrics is off in this minute and above its halfway bar (if it has one)."""
    return any(off_metric(point, m, baseline, th, level) and at(point, m)[level] > bar.get(m, 0.0) for m in own)


class Levels:
    """The sorted p95s of an incident's own metrics, and their *halfway* bars (bar()): for each own metric with a
    baseline above 0, the geometric mean of the baseline's median and the median p95 of the incident's minutes, at
    most SPIKE_RATIO x the baseline's median. Sorted as minutes come (add), so a long open incident is not sorted
    again every minute.

    TRICKY: a minute of a spiky metric (TTFT p95 of a mixed prompt population) passes the departure limit about
    once in six healthy minutes; an incident that tripled it is over once its minutes are back nearer the baseline
    than the incident, and spikes just before an onset are not its start. Geometric: a queue that went from 5 ms
    to 2 s is still draining at 150 ms. The cap: a retry storm's TTFT 30x its baseline comes in waves, and a minute
    between them at 4x is not back."""

    def __init__(self, points: list[dict], own: tuple, baseline: Baseline, level: str = "p95"):
        self.baseline, self.level = baseline, level
        self.values = {m: sorted(at(p, m)[level] for p in points if at(p, m)[level] is not None) for m in own}

    def add(self, point: dict) -> None:
        for metric, values in self.values.items():
            if at(point, metric)[self.level] is not None:
                bisect.insort(values, at(point, metric)[self.level])

    def bar(self) -> dict:
        bar = {}
        for metric, values in self.values.items():
            median = self.baseline.median(metric, self.level)
            if values and median and median > 0:
                bar[metric] = min((median * statistics.median(values)) ** 0.5, SPIKE_RATIO * median)
        return bar


def detect(points: list[dict], start: datetime, end: datetime, chooser: Chooser, th: Thresholds,
           level: str = "p95") -> Detection:
    """The incidents with an onset in the judged minutes of [start, end) (an incident open at `start` must be
    judged from its onset: the caller starts the stretch there). `points`: incident_series rows, oldest first.
    `level`: the per-minute quantile judged, "p95" (a service) or "p50" (a slice: SLICE_LEVEL)."""
    judged = [p for p in points if start <= p["at"] < end and p["attempts"] >= th.incident_min_attempts]
    traffic = [p["at"] for p in points if p["attempts"] > 0 and p["at"] < end]  # for the silence rule
    center, spread, has = chooser.prepare([p["at"] for p in judged])
    # TRICKY: whether each minute is off against its baseline with nothing skipped, all at once: a minute judged
    # with no incident open, no run of off minutes and no skipped minute in its baseline's span (most of them) is
    # decided by it, with no Baseline made; the others as before. Judging each minute in Python was most of the
    # incidents step's time.
    plain_off = off_minutes(matrix(judged, th.incident_min_attempts), center, spread, th, level).tolist()
    has = has.tolist()
    out = Detection([], judged=len(judged))
    run: list[tuple[dict, Baseline]] = []  # consecutive off minutes, not yet an incident
    back: list[dict] = []  # consecutive normal minutes of an open incident
    current: Found | None = None
    inside: set[datetime] = set()  # minutes of the incidents found so far: no later baseline is made of them
    i = 0
    while i < len(judged):
        point, i = judged[i], i + 1
        if current is not None and _silent_before(traffic, point["at"], th):
            _close_silent(current, _last_traffic(traffic, point["at"]), th, out)
            current, back = None, []
        if current is None:
            skip = inside | {p["at"] for p, _ in run}
            if not plain_off[i - 1] and chooser.unskipped(point["at"], skip):
                if not has[i - 1]:
                    out.no_baseline_minutes.append(point["at"])
                run = []
                continue
            baseline = chooser.at(point["at"], skip)
            if baseline is None:
                out.no_baseline_minutes.append(point["at"])
                run = []
            elif is_off(point, baseline, th, level):
                run.append((point, baseline))
                if len(run) >= th.incident_persist_minutes:
                    onset, baseline = [p for p, _ in run], run[0][1]
                    current = Found(onset[0]["at"], baseline, points=onset,
                                    own=own_metrics(onset, baseline, th, level), level=level)
                    levels = Levels(onset, current.own, baseline, level)
                    inside.update(p["at"] for p, _ in run)
                    out.incidents.append(current)
                    run = []
            else:
                run = []
            continue
        current.points.append(point)
        inside.add(point["at"])
        levels.add(point)
        off = still_off(point, current.baseline, th, current.own, levels.bar(), level)
        back = closing(back, point, off)
        if sum(1 for _, off in back if not off) >= th.incident_persist_minutes:
            current.end = back[0][0]["at"]
            current.points = [p for p in current.points if p["at"] < current.end]
            settle(current, th)
            if current.end - current.start < th.incident_min_minutes * MINUTE:
                out.incidents.remove(current)  # a blip (see Thresholds.incident_min_minutes)
            # the closing minutes are judged again with no incident open: one may start the next incident
            inside -= {p["at"] for p, _ in back}
            i -= len(back)
            current, back = None, []
    if current is not None and _silent_before(traffic, end, th):
        _close_silent(current, _last_traffic(traffic, end), th, out)
    elif current is not None:
        settle(current, th)
        if judged[-1]["at"] + MINUTE - current.start < th.incident_open_minutes * MINUTE:
            out.incidents.remove(current)  # too young: reported once it has lasted incident_open_minutes
    return out


def _last_traffic(traffic: list[datetime], at: datetime) -> datetime:
    """The last minute with attempts before `at` (traffic: sorted minutes with any attempts)."""
    return traffic[bisect.bisect_left(traffic, at) - 1]


def _silent_before(traffic: list[datetime], at: datetime, th: Thresholds) -> bool:
    """Whether incident_silence_minutes or more minutes without a single attempt come just before `at`."""
    k = bisect.bisect_left(traffic, at)
    return k > 0 and at - (traffic[k - 1] + MINUTE) >= th.incident_silence_minutes * MINUTE


def _close_silent(current: Found, last: datetime, th: Thresholds, out: Detection) -> None:
    """Close an open incident whose service stopped sending: it ends with the last minute that had traffic."""
    current.end, current.end_reason = last + MINUTE, "silence"
    current.points = [p for p in current.points if p["at"] < current.end]
    if current.points:
        settle(current, th)
    if current.end - current.start < th.incident_min_minutes * MINUTE:
        out.incidents.remove(current)  # a blip, as when it closes on normal minutes


def beside(whole: list[Found], route: list[Found]) -> list[Found]:
    """A slice's incidents (`route`) that overlap none of `whole` (its whole service's, and those of the slices
    kept before it): a service-wide incident covers its slices' (its scope names the slice when the excess is
    there), so one change is one incident. What is left is a slice that changed while the service's p95 did not: a
    slow minor route hardly moves it."""
    def overlaps(a: Found, b: Found) -> bool:
        return (a.end is None or b.start < a.end) and (b.end is None or a.start < b.end)
    for found in route:
        for other in whole:
            if overlaps(found, other):
                outlast(other, found)
    return [found for found in route if not any(overlaps(found, other) for other in whole)]


def outlast(whole: Found, part: Found) -> None:
    """A service-wide incident lasts as long as a slice's that overlaps it: one change, seen for longer on the
    slice. TRICKY: a slow minor route (10-20 % of the attempts) moves the service's per-minute p95 only in the
    minutes it holds enough of the top 5 %; three quieter minutes in a row closed the service's incident 9 minutes
    early while the route's own medians stayed off, and the route's incident, overlapping it, was left out."""
    if whole.end is None or (part.end is not None and part.end <= whole.end):
        return
    whole.end, whole.end_reason = part.end, part.end_reason


def keep_slices(whole: list[Found], found: dict[tuple[str, str], list[Found]]) -> dict[tuple[str, str], list[Found]]:
    """Each slice's incidents beside the whole service's and those of the slices kept before it (routes, then
    tenants, then instances; by name), so that one change is one incident; a tenant's or an instance's get their
    `slice`."""
    kept, out = list(whole), {}
    for key in sorted(found, key=lambda key: (SLICES.index(key[0]), key[1])):
        out[key] = mine = beside(kept, found[key])
        kept += mine
        if key[0] != "route":
            for item in mine:
                item.slice = {"dimension": key[0], "value": key[1]}
    return out


def settle(found: Found, th: Thresholds) -> None:
    """Moves the onset to the first of incident_persist_minutes minutes in a row that are all nearer the incident
    than the baseline (above Levels.bar) on a metric off in most of its minutes (else to the first such minute):
    spikes, or a few mildly slow minutes, just before the real change are not its start. TRICKY: in a row,
    as an incident opens: healthy TTFT p95 spikes past 3x its baseline median now and then, and two such spikes with
    a normal minute between them had started a network incident four minutes early."""
    own = own_metrics(found.points, found.baseline, th, found.level)
    bar = Levels(found.points, own, found.baseline, found.level).bar()
    off = [still_off(p, found.baseline, th, own, bar, found.level) for p in found.points]
    run = th.incident_persist_minutes
    first = next((i for i in range(len(off) - run + 1) if all(off[i:i + run])), None)
    if first is None:
        first = next((i for i, is_off in enumerate(off) if is_off), len(off) - 1)
    found.points = found.points[first:]
    found.start = found.points[0]["at"]


def closing(back: list, point: dict, off: bool) -> list:
    """The minutes since an open incident looked back at its baseline, as (point, off) pairs: they start with a
    normal minute and tolerate CLOSING_SPIKES off minutes; one more starts the count again."""
    if not back:
        return [] if off else [(point, False)]
    if off and sum(1 for _, was_off in back if was_off) >= CLOSING_SPIKES:
        return []
    return back + [(point, off)]
