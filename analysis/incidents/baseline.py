"""A service's own recent normal, per minute judged: which minutes it is made of, and its robust statistics.

For a minute t the baseline is the same hour of the previous day when that hour has enough minutes with
traffic, else the preceding minutes up to ANALYSIS_BASELINE_HOURS before t. Minutes inside stored or currently
detected incidents are left out of both. With fewer than incident_baseline_minutes minutes with traffic there
is no baseline and no detection (detection.py counts those minutes, it does not guess).

Per metric (analysis.buckets.ALL) the statistics are the median and the MAD of the per-minute p95s (and p50s)
over the baseline minutes with enough known values: medians of minutes, not a quantile of pooled attempts, so
one busy minute weighs no more than a quiet one and an outlier minute barely moves them.
"""
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

from analysis import buckets
from analysis.windows import iso

MINUTE = timedelta(minutes=1)
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
LEVELS = ("p50", "p95")


@dataclass(frozen=True)
class Baseline:
    """start/end: the first used minute and the end of the last one; source: "previous_day" or "preceding";
    stats: {metric: {level: (median, MAD)}} for the metrics with enough known values in enough minutes."""

    start: datetime
    end: datetime
    minutes: int
    source: str
    stats: dict

    def median(self, metric: str, level: str = "p95") -> float | None:
        found = self.stats.get(metric, {}).get(level)
        return found[0] if found else None

    def summary(self) -> dict:
        """The stored shape: {"start", "end" (ISO Z), "buckets": {bucket: {"p50", "p95"}}, "ttft", "total"}: the
        per-minute medians in ms, None for a metric not measured in the baseline."""
        def levels(metric):
            return {level: _round(self.median(metric, level)) for level in LEVELS}
        return {"start": iso(self.start), "end": iso(self.end),
                "buckets": {name: levels(name) for name in buckets.PARTS},
                "ttft": levels("ttft"), "total": levels("total")}


def mad(values: list[float], center: float) -> float:
    """The median absolute deviation of `values` around `center`."""
    return statistics.median(abs(v - center) for v in values)


def summarize(points: list[dict], source: str, min_attempts: int) -> Baseline:
    """The Baseline of these series points (queries.incident_series rows with enough attempts)."""
    stats = {}
    for metric in buckets.ALL:
        known = [p[metric] for p in points if p[metric]["count"] >= min_attempts]
        if not known:
            continue
        stats[metric] = {}
        for level in LEVELS:
            values = [k[level] for k in known]
            center = statistics.median(values)
            stats[metric][level] = (center, mad(values, center))
    return Baseline(points[0]["at"], points[-1]["at"] + MINUTE, len(points), source, stats)


class Chooser:
    """Picks the baseline of each judged minute from the series read around the judged stretch.

    points: the series over [stretch start - ANALYSIS_BASELINE_HOURS, stretch end), previous: over the same span a
    day earlier; excluded(at) tells a minute inside a stored or detected incident. Only minutes with at least
    min_attempts attempts count as minutes with traffic."""

    def __init__(self, points, previous, excluded, hours: int, min_attempts: int, min_minutes: int):
        self.points = [p for p in points if p["attempts"] >= min_attempts]
        self.previous = [p for p in previous if p["attempts"] >= min_attempts]
        self.excluded, self.span = excluded, timedelta(hours=hours)
        self.min_attempts, self.min_minutes = min_attempts, min_minutes
        self._previous_cache: dict[datetime, Baseline | None] = {}

    def at(self, t: datetime, skip: set = frozenset()) -> Baseline | None:
        """The baseline of minute t, leaving out the minutes in `skip` too (the incidents the walk found, its run
        of off minutes not yet an incident); None when neither choice has enough minutes with traffic."""
        return self._previous_day(t) or self._preceding(t, skip)

    def _previous_day(self, t: datetime) -> Baseline | None:
        hour = t.replace(minute=0, second=0, microsecond=0) - DAY
        if hour not in self._previous_cache:
            used = [p for p in self.previous if hour <= p["at"] < hour + HOUR and not self.excluded(p["at"])]
            self._previous_cache[hour] = self._make(used, "previous_day")
        return self._previous_cache[hour]

    def _preceding(self, t: datetime, skip: set) -> Baseline | None:
        used = [p for p in self.points if t - self.span <= p["at"] < t
                and p["at"] not in skip and not self.excluded(p["at"])]
        return self._make(used, "preceding")

    def _make(self, used: list[dict], source: str) -> Baseline | None:
        return summarize(used, source, self.min_attempts) if len(used) >= self.min_minutes else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
