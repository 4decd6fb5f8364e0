"""Per-hour aggregates of request_buckets, so reads over hours or days read minutes and hours, not attempts.

Thirteen tables are recomputed, per project and whole hour, when a materialized hour has settled (materialize.py):
scheduler_minutes (the scheduler sweep per instance-minute and tenant-hour, the scheduler_pieces view),
request_hours (attempts per service, route and hour: the pickers' counts), bucket_minutes and bucket_hours (per
service, route and minute or hour: each bucket's DDSketch, sum and count, for the series and distributions of long
windows) and overview_five_minutes (the Overview series' sketches per service and five minutes, every route),
tenant_hours (the tenant tails' sketches per service, route, tenant and hour) and tenant_service_hours (the same
over all routes), share_hours (the per-request shares' sketches per service, route and hour),
segment_hours (bucket_hours per prompt-length segment, cut at the ANALYSIS_SEGMENT_EDGES of the refresh),
retry_hours (retry counts per service, route and hour), churn_minutes (connection churn and the exact TTFT p95
of each minute, per service and per route), incident_minutes (incident detection's series per service, route,
tenant, instance and minute) and coverage_hours (measurement coverage per service, route, hour and
span form). Each recomputation is a new version of the hour's rows, recorded last in aggregated_hours, and
reads keep only the recorded version (_core_version.sql).

An hour is aggregated once it has settled, SETTLE after its end (after_materialize): before that it is still
taking spans, the minute job materializes it every minute, and no window that ends by now holds it whole, so
aggregating it would be paid every minute for nothing. Hours materialized before they settle wait as
UnaggregatedHour rows for the minute job's first run after (analysis/work/jobs.py); a settled hour materialized
again (late spans) is aggregated at once.

A read splits its window [start, end) into the core, the longest run of aggregated whole hours inside it, read
from the aggregates, and the edges before and after it, read from request_buckets as before; a window without
an aggregated whole hour is read from request_buckets alone. The two parts add up exactly: the
sweep is cut at hours (and its minutes at minute edges) in both, and counts are per hour.
"""
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import partial
from threading import Lock

from django.conf import settings

from analysis.models import UnaggregatedHour
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client, tables
from store.concurrent import gather, read_once

HOUR = timedelta(hours=1)
# TRICKY: spans are exported when a request ends, so an hour keeps getting its requests' spans for minutes after
# its end; aggregating it this long after keeps one aggregation per hour in the common case
SETTLE = timedelta(minutes=10)
CHUNK_HOURS = 6
# answers kept within one shared_reads() block (None outside one): key -> Future, and the lock that guards the dict
_shared: ContextVar[tuple[dict, Lock] | None] = ContextVar("aggregate_reads", default=None)
# the INSERT ... SELECT of each aggregate table, in chains: a chain's later statements read what its first wrote
# (bucket_minutes, tenant_hours), the others read request_buckets. The chains run side by side in this order: the two
# longest statements (scheduler and incident minutes) at either end run beside short ones, not together (together:
# +0.4 s an hour)
CHAINS = tables.chains()  # the aggregate tables and their order: store/tables.py


def floor_hour(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def ceil_hour(moment: datetime) -> datetime:
    floor = floor_hour(moment)
    return floor if floor == moment else floor + HOUR


def settled_before(now: datetime) -> datetime:
    """The hours starting before this one (naive UTC) have settled at `now`: ended SETTLE ago or more."""
    return floor_hour(utc_naive(now) - SETTLE)


def after_materialize(project_id: int, start: datetime, end: datetime, now: datetime) -> int:
    """The aggregates' part of materializing [start, end) at `now`: its settled hours are aggregated now (and
    leave the queue), the others are queued as UnaggregatedHour. Returns how many hours were aggregated."""
    lo, hi = floor_hour(utc_naive(start)), ceil_hour(utc_naive(end))
    cut = min(max(lo, settled_before(now)), hi)
    hours = [lo + HOUR * i for i in range(int((hi - lo) / HOUR))]
    UnaggregatedHour.objects.bulk_create([UnaggregatedHour(project_id=project_id, hour=_aware(h)) for h in hours if h >= cut],
                                         ignore_conflicts=True)
    if cut == lo:
        return 0
    done = refresh(project_id, lo, cut)
    UnaggregatedHour.objects.filter(project_id=project_id, hour__gte=_aware(lo), hour__lt=_aware(cut)).delete()
    return done


def settled_hours(now: datetime) -> list[UnaggregatedHour]:
    """The queued hours that have settled at `now`, oldest first."""
    return list(UnaggregatedHour.objects.filter(hour__lt=_aware(settled_before(now))).order_by("hour", "project_id"))


def aggregate_queued(row: UnaggregatedHour) -> str:
    """Aggregate one queued hour (and the next one when it has aggregates) and take it off the queue."""
    hour = utc_naive(row.hour)
    refresh(row.project_id, hour, hour + HOUR)
    row.delete()
    return "aggregated"


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc)


def refresh(project_id: int, start: datetime, end: datetime) -> int:
    """Recompute the aggregates of the project's whole hours over [start, end) and of the hour after when it has
    any (its scheduler state starts from the attempts still in flight). Returns how many hours were recorded.

    TRICKY: the hour before is left alone although an attempt whose queued_at moved on into the window (a late
    SGLang prefill_waiting child) still counts there until that hour is materialized again: redoing it every
    minute would double the minute job for a rare, one-attempt difference."""
    lo, hi = floor_hour(utc_naive(start)), ceil_hour(utc_naive(end))
    # the next hour only when it has aggregates already (the current hour's next one never has: the minute job's
    # common case costs one hour)
    if client.query_rows(_sql("aggregated_hours"),
                         parameters={"project_id": project_id, "start": hi, "end": hi + HOUR}):
        hi += HOUR
    # one version for every row and mark of this refresh (ClickHouse's now64 would differ per statement)
    computed_at = datetime.now(timezone.utc).replace(tzinfo=None)
    base = {"project_id": project_id, "computed_at": computed_at, "edges": list(settings.ANALYSIS_SEGMENT_EDGES)}
    # a backfill's days go a few hours at a time: each hour is computed on its own, so chunks change nothing but
    # the memory a statement needs
    for chunk in range(0, int((hi - lo) / HOUR), CHUNK_HOURS):
        params = {**base, "start": lo + HOUR * chunk, "end": min(hi, lo + HOUR * (chunk + CHUNK_HOURS))}
        # without a row to read every statement writes nothing (and costs 20-500 ms to plan): the hours are still
        # marked below, as a version with no rows
        if not client.query_rows(_sql("request_buckets_any"), parameters=params):
            continue
        # the chains write their own tables: run side by side they overlap their planning and their scans on the
        # cores (one hour of the 10M-span bench day: 2.6-2.7 s one after the other, 1.7-2.0 s three at a time,
        # CLICKHOUSE_READ_THREADS; little gain when merges already busy both cores); the hours are marked only once
        # all of them are written
        gather(*(partial(_run_chain, chain, params) for chain in CHAINS))
    hours = [lo + HOUR * i for i in range(int((hi - lo) / HOUR))]
    client.command(_sql("aggregate_mark_hours"), parameters={**base, "hours": hours})
    return len(hours)


def _run_chain(statements: tuple[str, ...], params: dict) -> None:
    for statement in statements:
        client.command(_sql(statement), parameters=params)


@dataclass(frozen=True)
class Split:
    """A window cut into its aggregated core [core_start, core_end) and the edges around it (naive UTC); without a
    core, core_start = core_end = end and the one edge is the whole window."""
    start: datetime
    end: datetime
    core_start: datetime
    core_end: datetime

    @property
    def params(self) -> dict:
        return {"start": self.start, "end": self.end, "core_start": self.core_start, "core_end": self.core_end}


def whole(start: datetime, end: datetime) -> Split:
    """The window without a core: read from request_buckets alone."""
    start, end = utc_naive(start), utc_naive(end)
    return Split(start, end, end, end)


@contextmanager
def shared_reads():
    """Within the block (and the store/concurrent.py threads it starts), the same window's split() and the reads
    passed to remembered() are asked of the store once: one diagnosis asks its window's core five times and the
    core's attempt count three, and its reads must all see one core even if a refresh lands meanwhile. A block
    inside another (a diagnosis on a dashboard page) shares the outer one's answers."""
    if _shared.get() is not None:
        yield
        return
    token = _shared.set(({}, Lock()))
    try:
        yield
    finally:
        _shared.reset(token)


def remembered(key: tuple, read: Callable[[], object]):
    """read()'s answer, kept under `key` for the rest of the enclosing shared_reads() block (none: read each time).
    Reader threads asking for the same key at once (a diagnosis's first side-by-side reads all ask for the window's
    core counts) wait for the first one's read instead of each reading."""
    shared = _shared.get()
    if shared is None:
        return read()
    memo, lock = shared
    return read_once(memo, lock, key, read)


def split(project_id: int, start: datetime, end: datetime) -> Split:
    """The window's longest run of aggregated whole hours as its core (the earliest of equal runs), else no core.
    The hours missing are the ones not settled yet, at the end, and hours without a span of the project."""
    start, end = utc_naive(start), utc_naive(end)
    if ceil_hour(start) >= floor_hour(end):
        return whole(start, end)
    return remembered(("split", project_id, start, end), lambda: _longest_run(project_id, start, end))


def _longest_run(project_id: int, start: datetime, end: datetime) -> Split:
    rows = client.query_rows(_sql("aggregated_hours"),
                             parameters={"project_id": project_id, "start": ceil_hour(start), "end": floor_hour(end)})
    best, run = None, None  # (first hour, hour after the last) of the longest run and of the current one
    for (hour,) in rows:
        hour = utc_naive(hour)
        run = (run[0], hour + HOUR) if run and run[1] == hour else (hour, hour + HOUR)
        if best is None or run[1] - run[0] > best[1] - best[0]:
            best = run
    return Split(start, end, *best) if best else whole(start, end)
