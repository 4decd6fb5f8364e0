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
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache

from analysis.rollups.aggregates import remembered
from analysis.scope import Scope
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client

# a window ending at the current minute moves on within a minute anyway; an older one's engine metrics (see above)
# may lag by this much
KEPT_SECONDS = 60
SETTINGS = ("ANALYSIS_", "DASHBOARD_", "GPU_")  # prefixes of the settings an answer may depend on


def window_version(scope: Scope) -> tuple:
    """(newest materialization, newest aggregation) among the hours of the scope's project and window: any change to
    what a read of the window sees changes it. Asked once per shared_reads() block (a page)."""
    params = {"project_id": scope.project_id, "start": utc_naive(scope.start), "end": utc_naive(scope.end)}
    return remembered(("window_version", scope.project_id, params["start"], params["end"]),
                      lambda: tuple(client.query_rows(_sql("window_version"), parameters=params)[0]))


def kept(name: str, scope: Scope, args: tuple, read: Callable[[], object]):
    """read()'s answer for the read `name` of `scope` with `args` (everything else its answer depends on), kept
    under the window's version for KEPT_SECONDS: read again only once an hour of the window has a new version."""
    key = "kept:" + scope.cache_key(name, args, window_version(scope), _settings())
    found = cache.get(key)
    if found is None:
        found = (read(),)  # a tuple: an answer of None is kept too
        cache.set(key, found, KEPT_SECONDS)
    return found[0]


def _settings() -> tuple:
    """The settings an answer may depend on, as they are now (tests and `override_settings` change them)."""
    return tuple((name, getattr(settings, name)) for name in sorted(dir(settings)) if name.startswith(SETTINGS))
