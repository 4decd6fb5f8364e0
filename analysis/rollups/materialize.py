"""Fill request_buckets (one row per attempt, buckets and stage sums in ms) from spans.

The attempts view joins stage spans and runs at read time and takes seconds per query over a busy
project; analysis reads request_buckets instead, recomputed per (project, hour of queued_at) by a
periodic job that redoes exactly the hours that received spans (dirty_hours), one statement per project and
hour however many services it holds: the minute pipeline queues them and works through them within its
budget (analysis/work/backlog.py, analysis/work/jobs.py); `materialize_dirty(since)` does them all at once.
"""
import logging
from datetime import datetime, timedelta, timezone

from analysis.rollups import aggregates
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client

log = logging.getLogger(__name__)
HOUR = timedelta(hours=1)
# the parts of materialize_request_buckets.sql left out (as _no_<part>.sql) where materialize_inputs.sql finds nothing
# for them to read
OPTIONAL_PARTS = ("log_spans", "held_runs", "http_runs")


def materialize(project_id: int, start: datetime, end: datetime, now: datetime | None = None) -> int:
    """Recompute request_buckets for the project's attempts queued in the whole hours over [start, end); returns
    the count of rows of [start, end) afterwards (chDB reports no written_rows).

    Each hour's rows are a new version, recorded in materialized_hours once written: reads keep the latest
    (_current.sql), so a read during a run sees the hour's previous version whole, and an attempt that left the hour
    (its queued_at moved) leaves with it. The hours that have settled at `now` (default: this machine's clock), and
    the next one when it has any, get their aggregates anew; the others are queued for them (analysis/rollups/aggregates.py).
    Idempotent: a re-run writes newer copies of the same rows.
    """
    lo, hi = aggregates.floor_hour(utc_naive(start)), aggregates.ceil_hour(utc_naive(end))
    # the store's clock: freshness.py compares computed_at with the spans' ingested_at, stamped by it
    params = {"project_id": project_id, "start": lo, "end": hi, "computed_at": utc_naive(store_now())}
    # TRICKY: the two INSERTs cost 0.1-0.6 s each to plan whatever they read (130-230 ms on a quiet machine, 220-570
    # under the suite's load); without an attempt span to read (or a trace across services) they write nothing, so a
    # cheap question first skips them (the marks below still record the new, then empty, version of the hours), and
    # tells which of the request_buckets INSERT's optional parts have anything to read: the others go as their empty
    # stand-ins (a window without log records, HTTP tries or failed named runs, most of them: ~40 % less to plan)
    [inputs] = client.query(_sql("materialize_inputs"), parameters=params)
    attempts = bool(inputs["attempts"])
    if attempts:
        client.command(_sql("materialize_request_buckets", without=tuple(p for p in OPTIONAL_PARTS if not inputs[p])),
                       parameters=params)
    client.command(_sql("mark_materialized_hours"), parameters={
        **params, "hours": [lo + HOUR * i for i in range(int((hi - lo) / HOUR))]})
    if attempts and client.query_rows(_sql("layer_traces_any"), parameters=params):
        client.command(_sql("materialize_layer_links"), parameters=params)  # reads the hours' rows just marked
    aggregates.after_materialize(project_id, lo, hi, now or datetime.now(timezone.utc))
    [(count,)] = client.query_rows(_sql("request_bucket_count"), parameters={
        **params, "start": utc_naive(start), "end": utc_naive(end)})
    return int(count)


def store_now() -> datetime:
    """The store's clock, aware UTC: the one ingested_at is stamped with, so watermarks compare with it."""
    [(now,)] = client.query_rows(_sql("store_now"))
    return now.replace(tzinfo=timezone.utc)


def dirty_hours(since: datetime) -> list[tuple[int, datetime]]:
    """(project_id, hour start as aware UTC datetime) pairs that received spans ingested at or after `since`.

    Hours are those of the spans' queued_at (start_at for stage spans); stage spans and retries within 10 minutes
    after an hour's end also mark that hour when an attempt of their trace (a retry: or of its run) is queued in it.
    Empty list when nothing came.
    """
    rows = client.query_rows(_sql("dirty_hours"), parameters={"since": utc_naive(since)})
    return [(int(project_id), hour.replace(tzinfo=timezone.utc)) for project_id, hour in rows]


def materialize_dirty(since: datetime) -> dict:
    """Materialize every dirty (project, hour) as the window [hour, hour + 1 h).

    Returns {"hours": n, "rows": total rows written, "projects": sorted project ids}.
    """
    hours = dirty_hours(since)
    rows = 0
    for project_id, hour in hours:
        rows += materialize(project_id, hour, hour + HOUR)
    log.info("materialized %d hours, %d rows since %s", len(hours), rows, since.isoformat())
    return {"hours": len(hours), "rows": rows, "projects": sorted({p for p, _ in hours})}
