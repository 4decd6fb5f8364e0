"""A service's own recent normal, per minute judged: which minutes it is made of, and its robust statistics.

For a minute t the baseline is the same hour of the previous day when that hour has enough minutes with
traffic, else the preceding minutes up to ANALYSIS_BASELINE_HOURS before t. Minutes inside stored or currently
detected incidents are left out of both. With fewer than incident_baseline_minutes minutes with traffic there
is no baseline and no detection (detection.py counts those minutes, it does not guess).

Per metric (analysis.buckets.ALL) the statistics are the median and the MAD of the per-minute p95s (and p50s)
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
COLUMNS = [(metric, level) for metric in buckets.ALL for level in LEVELS]


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
    return _summary(points[0]["at"], points[-1]["at"], _matrix(points, min_attempts), source)


def _matrix(points: list[dict], min_attempts: int) -> np.ndarray:
    """One row per point, a column per (metric, level) of COLUMNS: the value, NaN when the minute has fewer than
    min_attempts known values of that metric (not measured enough to count)."""
    return np.array([[p[m][level] if p[m]["count"] >= min_attempts and p[m][level] is not None else np.nan
                      for m, level in COLUMNS] for p in points], dtype=float).reshape(len(points), len(COLUMNS))


def _summary(first: datetime, last: datetime, rows: np.ndarray, source: str) -> Baseline:
    """The Baseline of the minutes first..last whose values are `rows` (_matrix): per (metric, level) with a known
    value, the median of its values and their median absolute deviation around it. TRICKY: numpy, not
    statistics.median per column: a walk makes a baseline for every judged minute of the service and of each slice,
    and sorting 16 columns in Python was most of the incidents step's time."""
    stats: dict = {}
    known = ~np.isnan(rows).all(axis=0)
    if known.any():
        block = rows[:, known]
        center = _medians(block)
        spread = _medians(np.abs(block - center))
        for (metric, level), c, d in zip((col for col, k in zip(COLUMNS, known) if k), center, spread):
            stats.setdefault(metric, {})[level] = (float(c), float(d))
    return Baseline(first, last + MINUTE, len(rows), source, stats)


def _medians(block: np.ndarray) -> np.ndarray:
    """Each column's median over its known (non-NaN) values, as statistics.median gives it (the mean of the two
    middle values of an even count); every column has one known value at least. np.nanmedian gives the same through
    masked arrays, ~8x slower on 3 hours of minutes (127 vs 15 us for 180 x 16)."""
    ranked = np.sort(block, axis=0)  # NaN last
    count = (~np.isnan(block)).sum(axis=0)
    columns = np.arange(block.shape[1])
    return (ranked[(count - 1) // 2, columns] + ranked[count // 2, columns]) / 2


def _medians_3d(block: np.ndarray, count: np.ndarray) -> np.ndarray:
    """_medians of each matrix of a stack (axis 1: the minutes), `count` its known values per column: minutes x
    COLUMNS, NaN where a column has none. Sorts `block` in place (a median needs only each column's set of values)."""
    block.sort(axis=1)  # NaN last
    low = np.take_along_axis(block, np.maximum(count - 1, 0) // 2, axis=1)
    high = np.take_along_axis(block, count // 2, axis=1)
    return np.where(count > 0, (low + high) / 2, np.nan)[:, 0, :]


class Chooser:
    """Picks the baseline of each judged minute from the series read around the judged stretch.

    points: the series over [stretch start - ANALYSIS_BASELINE_HOURS, stretch end), previous: over the same span a
    day earlier; excluded(at) tells a minute inside a stored or detected incident. Only minutes with at least
    min_attempts attempts count as minutes with traffic."""

    def __init__(self, points, previous, excluded, hours: int, min_attempts: int, min_minutes: int):
        self.points = [p for p in points if p["attempts"] >= min_attempts]
        self._rows = _matrix(self.points, min_attempts)  # summarize's matrix of every point, sliced per minute
        self._at = [p["at"] for p in self.points]  # oldest first, as the series comes
        self._kept = [not excluded(at) for at in self._at]
        self.previous = [p for p in previous if p["attempts"] >= min_attempts]
        self.excluded, self.span = excluded, timedelta(hours=hours)
        self.min_attempts, self.min_minutes = min_attempts, min_minutes
        self._previous_cache: dict[datetime, Baseline | None] = {}
        self._plain: dict[datetime, Baseline | None] = {}  # prepare(): preceding baselines with nothing skipped

    def prepare(self, minutes: list[datetime]) -> None:
        """Makes the preceding baselines of these minutes (oldest first) with nothing in `skip`, all in one pass
        (_preceding_all); at() then takes them unless a skipped minute lies in the minute's span. TRICKY: a walk
        asks a baseline for every judged minute of the service and of each slice (~2,000 a service every minute),
        and one _summary call each was most of the incidents step's time."""
        todo = [t for t in minutes if self._previous_day(t) is None]
        for first in range(0, len(todo), PREPARE_CHUNK):
            self._plain.update(self._preceding_all(todo[first:first + PREPARE_CHUNK]))

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
        if t in self._plain and not any(t - self.span <= s < t for s in skip):
            return self._plain[t]
        at, kept = self._at, self._kept
        used = [i for i in range(bisect.bisect_left(at, t - self.span), bisect.bisect_left(at, t))
                if kept[i] and at[i] not in skip]
        if len(used) < self.min_minutes:
            return None
        return _summary(self.points[used[0]]["at"], self.points[used[-1]]["at"], self._rows[used], "preceding")

    def _preceding_all(self, minutes: list[datetime]) -> dict[datetime, Baseline | None]:
        """_preceding(t, skip=nothing) of each minute, as one array of their spans' rows (padded with NaN to the
        longest) sorted at once: the same medians and MADs as _summary's (_medians_3d)."""
        kept = np.flatnonzero(self._kept)
        at = [self._at[i] for i in kept]
        lo = np.array([bisect.bisect_left(at, t - self.span) for t in minutes], dtype=int)
        hi = np.array([bisect.bisect_left(at, t) for t in minutes], dtype=int)
        sizes = hi - lo
        out: dict[datetime, Baseline | None] = {t: None for t in minutes}
        enough = np.flatnonzero(sizes >= self.min_minutes)
        if not len(enough):
            return out
        lo, sizes = lo[enough], sizes[enough]
        offsets = np.arange(sizes.max())
        inside = offsets[None, :] < sizes[:, None]
        rows = self._rows[kept][np.where(inside, lo[:, None] + offsets[None, :], 0)]  # minutes x span x COLUMNS
        rows[~inside] = np.nan
        count = (~np.isnan(rows)).sum(axis=1, keepdims=True)
        center = _medians_3d(rows, count)
        spread = _medians_3d(np.abs(rows - center[:, None, :], out=rows), count)
        for n, (j, first, size, middle, deviation) in enumerate(zip(enough.tolist(), lo.tolist(), sizes.tolist(),
                                                                       center.tolist(), spread.tolist())):
            stats: dict = {}
            for (metric, level), c, d in zip(COLUMNS, middle, deviation):
                if c == c:  # not NaN: the column has a known value in the span
                    stats.setdefault(metric, {})[level] = (c, d)
            out[minutes[j]] = Baseline(at[first], at[first + size - 1] + MINUTE, size, "preceding", stats)
        return out

    def _make(self, used: list[dict], source: str) -> Baseline | None:
        return summarize(used, source, self.min_attempts) if len(used) >= self.min_minutes else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
