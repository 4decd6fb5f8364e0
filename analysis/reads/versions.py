"""Answers kept across requests for as long as the data they read is unchanged: the pickers and the coverage strip
that every dashboard page reads, and the pages' numbers (dashboard/access.py: Page.kept; the Diagnosis page's
answer).

Under ingest, the rows a read of a window sees change only when the minute job (or a fresh read's refresh) writes a
new version of one of its hours: request_buckets rows are read at each hour's latest materialization
(materialized_hours), the aggregates at each hour's latest aggregation (aggregated_hours). kept() asks the store for
that pair (one small read) and returns the answer read under the same pair before, if any. A page's service picker,
route picker and coverage strip then cost one version read between two materializations instead of three reads of
the window's attempts (`make bench-live`: the pickers were 25-45 % of a page's server time at 5,000 spans/s). The
pages' numbers likewise: a 24 h diagnosis is ~1 CPU-s of planning and scans, 0.9 s a view with the sender and the
minute jobs on the two cores, and a reload or a second member now costs the version read.

What the version does not see, KEPT_SECONDS bounds: the engine's own metrics (otel_metrics_*, read as sent, not
materialized: the Diagnosis page's engine evidence, the Capacity page's running gauge; the Engine page, all of it,
is not kept). The settings an answer depends on (thresholds, segment edges, prices) are part of the key; what a
project keeps in Django's database (an objective, a cost), the caller passes in `args`.
"""
import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import TypeVar

from django.conf import settings
from django.core.cache import caches

from analysis.rollups.aggregates import remembered
from analysis.scope import Scope
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client
from store.concurrent import read_once

# a window ending at the current minute moves on within a minute anyway; an older one's engine metrics (see above)
# may lag by this much
KEPT_SECONDS = 60
SETTINGS = ("ANALYSIS_", "DASHBOARD_", "GPU_")  # prefixes of the settings an answer may depend on
MAX_WATCHED = 64  # reads remembered for ahead.py: a few members' pages; the oldest asked go first
T = TypeVar("T")
_lock = threading.Lock()
_reading: dict[str, Future] = {}  # key -> the answer being read by a thread of this process
_watched: dict[tuple, "Watched"] = {}
_watching = contextvars.ContextVar("watching", default=0)


def window_version(scope: Scope) -> tuple:
    """(newest materialization, newest aggregation) among the hours of the scope's project and window: any change to
    what a read of the window sees changes it. Asked once per shared_reads() block (a page)."""
    params = {"project_id": scope.project_id, "start": utc_naive(scope.start), "end": utc_naive(scope.end)}
    return remembered(("window_version", scope.project_id, params["start"], params["end"]),
                      lambda: tuple(client.query_rows(_sql("window_version"), parameters=params)[0]))


def kept(name: str, scope: Scope, args: tuple, read: Callable[[Scope], T]) -> T:
    """read(scope)'s answer for the read `name` of `scope` with `args` (everything else its answer depends on), kept
    under the window's version for KEPT_SECONDS: read again only once an hour of the window has a new version. Threads
    of this process asking for the same answer at once wait for the first one's read.

    Within watching() (a page), the read is also remembered for analysis/reads/ahead.py, which reads it again before
    the next view needs it; and when the page may lag (watching(lagging=True)), an answer of the window's previous
    version, read seconds ago, is given while that thread reads the new one."""
    mode = _watching.get()
    if mode:
        watch(name, scope, args, read)
    key, latest = _keys(name, scope, args)
    found = caches["answers"].get(key)
    if found is None and mode == LAGGING:
        found = caches["answers"].get(latest)
    if found is not None:
        return found[0]

    def read_and_keep() -> tuple:
        answer = (read(scope),)  # a tuple: an answer of None is kept too
        caches["answers"].set_many({key: answer, latest: answer}, KEPT_SECONDS)
        return answer
    return read_once(_reading, _lock, key, read_and_keep, forget=True)[0]


def is_kept(name: str, scope: Scope, args: tuple) -> bool:
    """Whether the answer kept() would give is kept already (asks the window's version, as kept() does)."""
    return caches["answers"].get(_keys(name, scope, args)[0]) is not None


def _keys(name: str, scope: Scope, args: tuple) -> tuple[str, str]:
    """(the answer's key under the window's version, the key of the answer read last for the scope whatever the
    version then)."""
    now = _settings()
    return ("kept:" + scope.cache_key(name, args, window_version(scope), now),
            "kept-latest:" + scope.cache_key(name, args, now))


WATCHING, LAGGING = 1, 2  # watching()'s modes


@contextmanager
def watching(lagging: bool = False):
    """Within the block (a dashboard page, and the reader threads it starts), every kept() read is remembered as
    watched: ahead.py reads it again when its window's data changes or its window moves on with the clock.

    lagging: the page goes on with hours left stale (analysis/rollups/freshness.py: a busy hour is materialized in the
    background, the page lags by up to about a minute job's period); when the reads ahead are on, a new version's
    answer not read yet is then the previous version's, read ahead at most seconds before (stale while revalidating,
    as RFC 5861 names it): under steady ingest each minute job and background run makes a new version, and the view
    after each would otherwise pay the whole read (a 24 h Diagnosis ~1 CPU-s)."""
    token = _watching.set(LAGGING if lagging and settings.DASHBOARD_READ_AHEAD else WATCHING)
    try:
        yield
    finally:
        _watching.reset(token)


@dataclass
class Watched:
    """A read a page asked for: `rolling` when its window ended at the next minute's start (a range ending now, which
    moves on every minute, keeping its length); `asked`: time.monotonic() of the last time it was asked."""
    name: str
    scope: Scope
    args: tuple
    read: Callable[[Scope], object]
    rolling: bool
    asked: float

    def now(self) -> Scope:
        """The scope a page would ask for now: a rolling window moved on to end at the next minute's start."""
        if not self.rolling:
            return self.scope
        end = next_minute()
        return replace(self.scope, start=end - (self.scope.end - self.scope.start), end=end)


def watch(name: str, scope: Scope, args: tuple, read: Callable[[Scope], object]) -> None:
    rolling = scope.end == next_minute()
    window = ("rolling", scope.end - scope.start) if rolling else (scope.start, scope.end)
    ident = (name, scope.project_id, scope.service, scope.route, scope.tenant, window, repr(args))
    with _lock:
        _watched.pop(ident, None)  # re-inserted last: the dict is oldest asked first
        _watched[ident] = Watched(name, scope, args, read, rolling, time.monotonic())
        while len(_watched) > MAX_WATCHED:
            del _watched[next(iter(_watched))]


def watched(within: float) -> list[Watched]:
    """The reads pages asked for in the last `within` seconds, the latest first (the others are forgotten)."""
    since = time.monotonic() - within
    with _lock:
        for ident in [i for i, w in _watched.items() if w.asked < since]:
            del _watched[ident]
        return list(reversed(_watched.values()))


def next_minute() -> datetime:
    """The start of the next minute: where a dashboard range ending now ends (dashboard/filters.py: now_minute)."""
    return datetime.now(timezone.utc).replace(second=0, microsecond=0) + timedelta(minutes=1)


def _settings() -> tuple:
    """The settings an answer may depend on, as they are now (tests and `override_settings` change them)."""
    return tuple((name, getattr(settings, name)) for name in sorted(dir(settings)) if name.startswith(SETTINGS))
