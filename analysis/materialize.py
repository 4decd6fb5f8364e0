"""Fill request_buckets (one row per attempt, buckets and stage sums in ms) from spans.

The attempts view joins stage spans and runs at read time and takes seconds per query over a busy
project; analysis reads request_buckets instead, recomputed per (project, hour of queued_at) by a
periodic job that redoes exactly the hours that received spans (dirty_hours), one statement per project and
hour however many services it holds: the minute pipeline queues them and works through them within its
budget (analysis/backlog.py, analysis/jobs.py); `materialize_dirty(since)` does them all at once.
"""
import logging
from datetime import datetime, timedelta, timezone
from pathlib import Path

from analysis import aggregates
from analysis.windows import utc_naive
from store import client
from store.sql import SqlFiles

log = logging.getLogger(__name__)
_sql = SqlFiles(Path(__file__).parent / "sql").text
HOUR = timedelta(hours=1)


def materialize(project_id: int, start: datetime, end: datetime, now: datetime | None = None) -> int:
    """Recompute request_buckets for the project's attempts queued in [start, end); returns the
    window's row count afterwards (chDB reports no written_rows).

    The window's hours that have settled at `now` (default: this machine's clock), and the next one when it has
    any, get their aggregates anew; the others are queued for them (analysis/aggregates.py).
    Idempotent: a re-run writes newer copies of the same (trace_id, span_id) keys, which FINAL reads
    as one row each. An attempt that left the window (its queued_at moved) keeps its old row.
    """
    params = {"project_id": project_id, "start": utc_naive(start), "end": utc_naive(end)}
    client.command(_sql("materialize_request_buckets"), parameters=params)
    aggregates.after_materialize(project_id, start, end, now or datetime.now(timezone.utc))
    [(count,)] = client.query_rows(_sql("request_bucket_count"), parameters=params)
    return int(count)


def dirty_hours(since: datetime) -> list[tuple[int, datetime]]:
    """(project_id, hour start as aware UTC datetime) pairs that received spans ingested at or after `since`.

    Hours are those of the spans' queued_at (start_at for stage spans); stage spans and retries also
    mark the previous hour when they lie within 10 minutes after its end. Empty list when nothing came.
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
