"""An SLO's good, bad and not-measured requests per clock hour or per minute, read from request_buckets with the SLO's
own threshold (sql/slo_counts.sql says what each count holds). analysis/reads/slos.py turns them into the SLO's numbers.

Counting with an arbitrary threshold means reading every attempt of the window (the hourly aggregates keep sketches,
which cannot say exactly how many values lie under a threshold): 30 days of a busy service are tens of millions of
rows, seconds per SLO (benchmarks/bench_slos.py). So the counts of each whole hour that has settled are kept in the
cache under the hour's materialized version: a page reads its window's first and last hours and what is new since;
an hour materialized again (late spans) has a new version, so its counts are read again.
"""
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.cache import cache

from analysis.rollups.aggregates import HOUR, ceil_hour, floor_hour, settled_before
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client
from store.concurrent import gather

MINUTE = timedelta(minutes=1)
KEPT_SECONDS = 31 * 86_400  # the longest window, and a day


@dataclass(frozen=True)
class Counts:
    """Requests of a stretch of time: good, bad and not measured (neither)."""
    good: int = 0
    bad: int = 0
    unmeasured: int = 0

    @property
    def measured(self) -> int:
        return self.good + self.bad

    @property
    def requests(self) -> int:
        return self.measured + self.unmeasured

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.good + other.good, self.bad + other.bad, self.unmeasured + other.unmeasured)


def total(parts) -> Counts:
    return sum(parts, Counts())


def per_minute(slo, start: datetime, end: datetime) -> dict[int, Counts]:
    """{i: Counts of [start + i min, start + (i + 1) min)} over [start, end) (naive UTC), minutes without a request
    left out. Read every time: the burn rates' recent hours are still taking spans."""
    return _read(slo, start, end, origin=start, step=MINUTE)


def per_hour(slo, start: datetime, end: datetime) -> dict[datetime, Counts]:
    """{clock hour: Counts of its part inside [start, end)} (naive UTC), hours without a request left out. Whole
    settled hours come from the cache when their materialized version was read before."""
    start, end = utc_naive(start), utc_naive(end)
    lo, cut = ceil_hour(start), max(ceil_hour(start), min(floor_hour(end), settled_before(end)))
    kept = _versions(slo.project_id, lo, cut) if lo < cut else {}
    found = cache.get_many([_key(slo, h, v) for h, v in kept.items()])
    counts = {h: Counts(*found[_key(slo, h, v)]) for h, v in kept.items() if _key(slo, h, v) in found}
    missing = [h for h in kept if h not in counts]
    ranges = _runs(missing) + [r for r in ((start, min(lo, end)), (cut, end)) if r[0] < r[1]]
    for part in gather(*(lambda r=r: _by_hour(slo, *r) for r in ranges)):
        counts.update(part)
    cache.set_many({_key(slo, h, kept[h]): _tuple(counts.get(h, Counts())) for h in missing}, KEPT_SECONDS)
    return {h: c for h, c in sorted(counts.items()) if c.requests}


def _by_hour(slo, start: datetime, end: datetime) -> dict[datetime, Counts]:
    origin = floor_hour(start)
    return {origin + HOUR * i: c for i, c in _read(slo, start, end, origin=origin, step=HOUR).items()}


def _read(slo, start: datetime, end: datetime, origin: datetime, step: timedelta) -> dict[int, Counts]:
    rows = client.query(_sql("slo_counts"), parameters={
        "project_id": slo.project_id, "service": slo.service, "route": slo.route, "tenant": slo.tenant,
        "signal": slo.signal, "threshold_ms": float(slo.threshold_ms), "start": utc_naive(start),
        "end": utc_naive(end), "origin": utc_naive(origin), "step_ns": int(step.total_seconds()) * 1_000_000_000})
    return {int(r["step"]): Counts(int(r["good"]), int(r["bad"]), int(r["unmeasured"])) for r in rows}


def _versions(project_id: int, start: datetime, end: datetime) -> dict[datetime, datetime]:
    """{hour: its materialized version} of the project's hours in [start, end) (an hour without one holds nothing)."""
    rows = client.query_rows(_sql("materialized_versions"),
                             parameters={"project_id": project_id, "start": start, "end": end})
    return {utc_naive(hour): utc_naive(version) for hour, version in rows}


def _runs(hours: list[datetime]) -> list[tuple[datetime, datetime]]:
    """Sorted hours as the fewest [start, end) ranges."""
    runs: list[list[datetime]] = []
    for hour in sorted(hours):
        if runs and runs[-1][1] == hour:
            runs[-1][1] = hour + HOUR
        else:
            runs.append([hour, hour + HOUR])
    return [(a, b) for a, b in runs]


def _key(slo, hour: datetime, version: datetime) -> str:
    # everything the counts depend on: the SLO's scope and threshold, the hour and the rows' version
    what = json.dumps([slo.project_id, slo.service, slo.route, slo.tenant, slo.signal, float(slo.threshold_ms),
                       hour.isoformat(), version.isoformat()])
    return "slo-hour:" + hashlib.sha256(what.encode()).hexdigest()


def _tuple(counts: Counts) -> tuple[int, int, int]:
    return counts.good, counts.bad, counts.unmeasured
