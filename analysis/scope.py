"""What a read is about: one project's service, a window, and optionally one route and one tenant.

Every read of the store takes a Scope instead of repeating (project_id, service, start, end, route, tenant). The
Scope owns what those parameters decide once for all the reads of a page or a job: the query parameters (naive UTC
instants, what DateTime64 parameters take), how an exact count splits the window into its aggregated core and edges,
whether a read may use the sketches, and the key its answers are cached under.

TRICKY: the split and the sketch decision are read once per Scope and kept on it: a Scope is built per page, API
call or job run, so a Scope kept past a refresh of its hours answers with the core it saw first (build a new one).
"""
import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from django.conf import settings

from analysis.rollups import aggregates
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client

# Windows at least this long read their whole aggregated hours' distributions and series from sketches (bucket_hours,
# bucket_minutes, tenant_hours: analysis/rollups/aggregates.py; a quantile is within 0.2 % of a value near its rank,
# counts and means exact); shorter ones, and any tenant filter, read every attempt and their quantiles are exact.
SKETCH_AFTER = timedelta(hours=6)
# ... and hold at least this many attempts in their core: below it reading every attempt is cheap, and a sketch's
# quantile (a value near the rank) is further from the exact one (interpolated between ranks) when values are few.
SKETCH_MIN_ATTEMPTS = 50_000


def _aware(moment: datetime) -> datetime:
    """`moment` as an aware UTC datetime; naive means UTC."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


@dataclass(frozen=True)
class Scope:
    """The attempts of `service` in `project_id` queued in [start, end) (aware UTC; naive ones are taken as UTC),
    narrowed to one `route` and one `tenant` when they are not "". service "" is every service of the project: the
    reads over several services (or the project's pickers) take such a Scope."""
    project_id: int
    service: str
    start: datetime
    end: datetime
    route: str = ""
    tenant: str = ""
    # what the scope has read once (split, core counts); not part of its value
    _read: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "start", _aware(self.start))
        object.__setattr__(self, "end", _aware(self.end))

    def params(self, **more) -> dict:
        """The query parameters of the scope (instants naive UTC), with `more`."""
        return {"project_id": self.project_id, "service": self.service, "start": utc_naive(self.start),
                "end": utc_naive(self.end), "route": self.route, "tenant": self.tenant, **more}

    @property
    def split(self) -> aggregates.Split:
        """How an exact count over the window reads: its aggregated core from the hourly tables (kept per route, not
        per tenant) and its edges from request_buckets; a tenant filter reads the whole window from request_buckets."""
        return self._once("split", lambda: aggregates.whole(self.start, self.end) if self.tenant
                          else aggregates.split(self.project_id, self.start, self.end))

    def _once(self, name: str, read):
        """read()'s answer, read once per Scope. TRICKY: not functools.cached_property, whose lock (Python 3.11) is
        one per class: the reader threads of different scopes would wait for each other's reads."""
        if name not in self._read:
            self._read[name] = read()
        return self._read[name]

    def _core_attempts(self) -> dict | None:
        """core_attempts.sql's row (counted, sketched, segmented) of the window's aggregated core; None when the
        sketches cannot serve the scope whatever they hold (a tenant filter, a window under SKETCH_AFTER, no core).
        Reads nothing in those cases."""
        if self.tenant or self.end - self.start < SKETCH_AFTER or self.split.core_start == self.split.core_end:
            return None
        cut = self.split
        [row] = self._once("core_attempts", lambda: aggregates.remembered(
            ("core_attempts", self.project_id, self.service, self.route, cut.core_start, cut.core_end),
            lambda: client.query(_sql("core_attempts"), parameters={
                **self.params(), **cut.params, "edges": list(settings.ANALYSIS_SEGMENT_EDGES)})))
        return row

    def sketches(self, cover: str = "sketched") -> bool:
        """Whether the window's reads may use the sketches: it is at least SKETCH_AFTER long, has no tenant filter
        and a core of at least SKETCH_MIN_ATTEMPTS, and the sketches `cover` (a column of core_attempts.sql:
        sketched, segmented) hold every attempt of that core."""
        row = self._core_attempts()
        return row is not None and (row["counted"] or 0) >= SKETCH_MIN_ATTEMPTS and row[cover] == row["counted"]

    def sketched(self, name: str, sketchable: bool = True, cover: str = "sketched", **more) -> tuple[str, dict]:
        """The query `name` and its parameters, or its _sketch variant over the window's aggregated core and edges
        when `sketchable` (the caller's own conditions) and sketches(cover)."""
        if sketchable and self.sketches(cover):
            return f"{name}_sketch", {**self.params(**more), **self.split.params}
        return name, self.params(**more)

    def counted(self, **more) -> dict:
        """The parameters of an exact count: params(**more) with the window's split (core and edges)."""
        return {**self.params(**more), **self.split.params}

    def cache_key(self, *parts) -> str:
        """A key naming this scope and `parts` (what else an answer depends on: a read's name, its arguments, the
        window's version) for a cache shared across processes."""
        named = (self.project_id, self.service, utc_naive(self.start), utc_naive(self.end), self.route, self.tenant,
                 parts)
        return hashlib.sha256(repr(named).encode()).hexdigest()
