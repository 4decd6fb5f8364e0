"""A service's own recent normal, per minute judged: which minutes it is made of, and its robust statistics.

For a minute t the baseline is the same hour of the previous day when that hour has enough minutes with
traffic, else the preceding minutes up to ANALYSIS_BASELINE_HOURS before t. Minutes inside stored or currently
detected incidents are left out of both. With fewer than incident_baseline_minutes minutes with traffic there
is no baseline and no detection (detection.py counts those minutes, it does not guess).

Per metric (METRICS: analysis.buckets.ALL and t_gateway) the statistics are the median and the MAD of the per-minute p95s (and p50s)
over the baseline minutes with enough known values: medians of minutes, not a quantile of pooled attempts, so
one busy minute weighs no more than a quiet one and an outlier minute barely moves them.
"""
import bisect
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from analysis import buckets
from analysis.windows import iso

MINUTE = timedelta(minutes=1)
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
LEVELS = ("p50", "p95")
PREPARE_CHUNK = 240  # minutes whose spans are stacked at once by Chooser.prepare (~6 MB for 3-hour spans)
# The metrics judged: the buckets, and t_gateway for a gateway's calls seen at two layers (jobs._series adds it):
# time added in its server span outside its calls moves none of the buckets. A series without it never departs on it.
METRICS = buckets.ALL + ("t_gateway",)
UNKNOWN = {"p50": None, "p95": None, "count": 0}
COLUMNS = [(metric, level) for metric in METRICS for level in LEVELS]


def value(point: dict, metric: str) -> dict:
    """A point's {"p50", "p95", "count"} of `metric`; not measured (count 0) when the point has none."""
    return point.get(metric, UNKNOWN)


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


def summarize(points: list[dict], source: str, min_attempts: int) -> Baseline:
    """The Baseline of these series points (queries.incident_series rows with enough attempts)."""
    return _summary(points[0]["at"], points[-1]["at"], matrix(points, min_attempts), source)


def matrix(points: list[dict], min_attempts: int) -> np.ndarray:
    """One row per point, a column per (metric, level) of COLUMNS: the value, NaN when the minute has fewer than
    min_attempts known values of that metric (not measured enough to count)."""
    return np.array([[value(p, m)[level] if value(p, m)["count"] >= min_attempts and value(p, m)[level] is not None
                      else np.nan for m, level in COLUMNS] for p in points], dtype=float).reshape(len(points), len(COLUMNS))


def _summary(first: datetime, last: datetime, rows: np.ndarray, source: str) -> Baseline:
    """The Baseline of the minutes first..last whose values are `rows` (matrix): per (metric, level) with a known
    value, the median of its values and their median absolute deviation around it."""
    center, spread = _medians_and_mads(rows[None].copy())
    return _baseline(first, last + MINUTE, len(rows), source, center[0], spread[0])


def _medians_and_mads(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per matrix of a stack (spans x minutes x COLUMNS, NaN unknown; sorted in place) and column: the median of its
    known values, as statistics.median gives it (the mean of the two middle values of an even count), and the
    median of their absolute deviations from it; spans x COLUMNS each, NaN where a column has no known value.
    TRICKY: numpy, not statistics.median per column: a walk asks a baseline for every judged minute of the service
    and of each slice, and sorting 16 columns in Python was most of the incidents step's time. np.nanmedian gives
    the same through masked arrays, ~8x slower on 3 hours of minutes (127 vs 15 us for 180 x 16)."""
    count = (~np.isnan(block)).sum(axis=1, keepdims=True)

    def medians(values):
        values.sort(axis=1)  # NaN last; a median needs only each column's set of values
        low = np.take_along_axis(values, np.maximum(count - 1, 0) // 2, axis=1)
        high = np.take_along_axis(values, count // 2, axis=1)
        return np.where(count > 0, (low + high) / 2, np.nan)[:, 0, :]
    center = medians(block)
    return center, medians(np.abs(block - center[:, None, :], out=block))


def _arrays(baseline: Baseline) -> tuple[list, list]:
    """A Baseline's statistics as rows of COLUMNS (NaN where not known): the inverse of _baseline's."""
    stats = baseline.stats
    pairs = [stats.get(metric, {}).get(level, (np.nan, np.nan)) for metric, level in COLUMNS]
    return [c for c, _ in pairs], [d for _, d in pairs]


def _baseline(first: datetime, end: datetime, minutes: int, source: str, center: np.ndarray,
              spread: np.ndarray) -> Baseline:
    """A Baseline from rows of medians and MADs over COLUMNS: the statistics of the columns with a known value."""
    stats: dict = {}
    for (metric, level), c, d in zip(COLUMNS, center.tolist(), spread.tolist()):
        if c == c:  # not NaN: the column has a known value in the span
            stats.setdefault(metric, {})[level] = (c, d)
    return Baseline(first, end, minutes, source, stats)


class Chooser:
    """Picks the baseline of each judged minute from the series read around the judged stretch.

    points: the series over [stretch start - ANALYSIS_BASELINE_HOURS, stretch end), previous: over the same span a
    day earlier; excluded(at) tells a minute inside a stored or detected incident. Only minutes with at least
    min_attempts attempts count as minutes with traffic."""

    def __init__(self, points, previous, excluded, hours: int, min_attempts: int, min_minutes: int):
        self.points = [p for p in points if p["attempts"] >= min_attempts]
        self._rows = matrix(self.points, min_attempts)  # summarize's matrix of every point, sliced per minute
        self._at = [p["at"] for p in self.points]  # oldest first, as the series comes
        self._kept = [not excluded(at) for at in self._at]
        self.previous = [p for p in previous if p["attempts"] >= min_attempts]
        self.excluded, self.span = excluded, timedelta(hours=hours)
        self.min_attempts, self.min_minutes = min_attempts, min_minutes
        self._previous_cache: dict[datetime, Baseline | None] = {}
        # prepare(): the preceding baselines with nothing skipped, as rows of arrays until one is asked for
        self._plain: dict[datetime, tuple] = {}
        self._made: dict[datetime, Baseline | None] = {}

    def prepare(self, minutes: list[datetime]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The baselines of these minutes (oldest first) with nothing skipped, as at(t) gives them: (median, MAD,
        has): median and MAD minutes x COLUMNS, NaN where a minute has no baseline or the baseline no known value of
        the column; has, whether the minute has a baseline. The preceding ones are made in one pass (_preceding_all);
        at() then takes them unless a skipped minute lies in the minute's span. TRICKY: a walk asks a baseline for every judged minute of the
        service and of each slice (~2,000 a service every minute), and one _summary call each was most of the
        incidents step's time."""
        center = np.full((len(minutes), len(COLUMNS)), np.nan)
        spread = center.copy()
        has = np.zeros(len(minutes), dtype=bool)
        todo = []
        for n, t in enumerate(minutes):
            previous = self._previous_day(t)
            if previous is None:
                todo.append(n)
            else:
                center[n], spread[n], has[n] = *_arrays(previous), True
        for first in range(0, len(todo), PREPARE_CHUNK):
            rows = todo[first:first + PREPARE_CHUNK]
            self._plain.update(self._preceding_all([minutes[n] for n in rows], center, spread, has, rows))
        return center, spread, has

    def at(self, t: datetime, skip: set = frozenset()) -> Baseline | None:
        """The baseline of minute t, leaving out the minutes in `skip` too (the incidents the walk found, its run
        of off minutes not yet an incident); None when neither choice has enough minutes with traffic."""
        return self._previous_day(t) or self._preceding(t, skip)

    def unskipped(self, t: datetime, skip: set) -> bool:
        """Whether at(t, skip) is the baseline prepare() gave for t: the previous day's (it skips nothing), or the
        preceding one when no minute of `skip` lies in its span."""
        return self._previous_day(t) is not None or self._clear(t, skip)

    def _clear(self, t: datetime, skip: set) -> bool:
        """No minute of `skip` lies in the span of t's preceding baseline."""
        return not any(t - self.span <= s < t for s in skip)

    def _previous_day(self, t: datetime) -> Baseline | None:
        hour = t.replace(minute=0, second=0, microsecond=0) - DAY
        if hour not in self._previous_cache:
            used = [p for p in self.previous if hour <= p["at"] < hour + HOUR and not self.excluded(p["at"])]
            self._previous_cache[hour] = self._make(used, "previous_day")
        return self._previous_cache[hour]

    def _preceding(self, t: datetime, skip: set) -> Baseline | None:
        if t in self._plain and self._clear(t, skip):
            if t not in self._made:
                self._made[t] = None if self._plain[t] is None else _baseline(*self._plain[t])
            return self._made[t]
        at, kept = self._at, self._kept
        used = [i for i in range(bisect.bisect_left(at, t - self.span), bisect.bisect_left(at, t))
                if kept[i] and at[i] not in skip]
        if len(used) < self.min_minutes:
            return None
        return _summary(at[used[0]], at[used[-1]], self._rows[used], "preceding")

    def _preceding_all(self, minutes: list[datetime], center: np.ndarray, spread: np.ndarray, has: np.ndarray,
                       rows: list[int]) -> dict[datetime, tuple | None]:
        """_preceding(t, skip=nothing) of each minute, as one array of their spans' rows (padded with NaN to the
        longest) sorted at once: the same medians and MADs as _summary's, written into center, spread and has at
        `rows`. Returns minute -> _baseline's arguments, None when its span has too few minutes."""
        kept = np.flatnonzero(self._kept)
        at = [self._at[i] for i in kept]
        lo = np.array([bisect.bisect_left(at, t - self.span) for t in minutes], dtype=int)
        hi = np.array([bisect.bisect_left(at, t) for t in minutes], dtype=int)
        sizes = hi - lo
        out: dict[datetime, tuple | None] = {t: None for t in minutes}
        enough = np.flatnonzero(sizes >= self.min_minutes)
        if not len(enough):
            return out
        lo, sizes = lo[enough], sizes[enough]
        offsets = np.arange(sizes.max())
        inside = offsets[None, :] < sizes[:, None]
        block = self._rows[kept][np.where(inside, lo[:, None] + offsets[None, :], 0)]  # minutes x span x COLUMNS
        block[~inside] = np.nan
        middle, deviation = _medians_and_mads(block)
        targets = [rows[j] for j in enough.tolist()]
        center[targets], spread[targets], has[targets] = middle, deviation, True
        for n, (j, first, size) in enumerate(zip(enough.tolist(), lo.tolist(), sizes.tolist())):
            out[minutes[j]] = (at[first], at[first + size - 1] + MINUTE, size, "preceding", middle[n], deviation[n])
        return out

    def _make(self, used: list[dict], source: str) -> Baseline | None:
        return summarize(used, source, self.min_attempts) if len(used) >= self.min_minutes else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
