"""Reads that reach into the last hours see what is stored now, not what the minute job last materialized.

analysis reads request_buckets, which the minute pipeline recomputes from spans once a minute (analysis/work/jobs.py);
a page or an API answer right after traffic would otherwise lag ingest by up to a minute or more (the issue saw
193 of 200 requests for a minute). refresh() runs before such a read: one query compares, per hour of the
window's last ANALYSIS_FRESH_HOURS, the newest span ingested with the hour's last materialization, and the stale
hours are materialized here, newest first, within ANALYSIS_FRESH_BUDGET_SECONDS. The query reads a row or a few per
hour (ingested_hours, filled on every INSERT into spans, and materialized_hours), not the hours' spans: under ingest
those were millions of rows before every page. Older hours only change through
late spans, which the minute job materializes as before. The minute job's queue (DirtyHour) is left alone: it
recomputes those hours once more, which is idempotent.

A busy hour (its last on-demand run took REST_FLOOR or more: seconds under steady ingest) is materialized in the
background instead, and the read goes on with the buckets as they are (lagging by about that run; what it reads is
kept under that materialization, analysis/reads/versions.py): measured in the running `up` under 5,000 spans/s,
pages waiting for the current hour's refresh were most of their time (docs/benchmarks.md, bench-live).
"""
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from django.conf import settings
from django.core.cache import cache
from django.db import connections

from analysis.rollups.materialize import HOUR, materialize
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client, priority

# TRICKY: an INSERT stamps ingested_at when it starts and its rows appear when it ends, so a span stamped just
# before a materialization may be missing from it: spans this close before the mark still count as newer.
OVERLAP = timedelta(seconds=2)
# a materialization faster than this never rests (see _state): a quiet project's reads are always current
REST_FLOOR = timedelta(seconds=1)
# a busy hour rests at least this long after a run began (on demand or the minute job's): under 5,000 spans/s the
# current hour took 8-12 s, and resting only twice that, the background refresh ran it twice for each minute job's
# run, two thirds of the machine's materializing beside the pages' reads (`make bench-live`); a page then lags by up
# to about a minute job's period, as before on-demand refresh, and the API still waits for everything
BUSY_REST = timedelta(seconds=60)
EPOCH_YEAR = 1970
_lock = threading.Lock()  # one refresh at a time per process: a burst of page views materializes an hour once
_pending: set[tuple[int, datetime]] = set()  # (project, hour) being materialized in the background
# The background refresh's ClickHouse client, one of its own: a client serialises its calls (store/client.py), and on
# the web threads' "default" client a page's reads queued behind the busy hour's materialization (a page at 1.7-2.1 s
# of which 40-70 ms its own CPU, one round in three, in `make bench-live` under 5,000 spans/s; py-spy: waiting for the
# client's lock). "read-": its gather()s run in place, not on the pages' reader threads (store/concurrent.py).
BACKGROUND_ROLE = "read-freshness"
_pending_lock = threading.Lock()
_done = threading.Condition(_pending_lock)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Freshness:
    """What refresh() found: the newest span ingested in the checked hours (None: none there, or the window
    ends before them), how many stale hours it materialized and how many it left stale for now (resting, or being
    materialized in the background)."""
    newest_ingested_at: datetime | None = None
    materialized: int = 0
    left: int = 0


def refresh(project_id: int, start: datetime, end: datetime, now: datetime | None = None,
            wait: bool = False) -> Freshness:
    """Materialize the project's stale hours among those of [start, end) in the last ANALYSIS_FRESH_HOURS hours
    before `now` (default: this machine's clock), newest first, until ANALYSIS_FRESH_BUDGET_SECONDS have passed.
    A window ending before those hours costs nothing (no query).

    wait: the API's reads (a script asks once and trusts the number): every stale hour is materialized here, busy and
    resting ones too, whatever the budget (at most ANALYSIS_FRESH_HOURS of them). A page goes on instead, with what
    is stored then (its answers kept under that, analysis/reads/versions.py, until the background run lands)."""
    now = now or datetime.now(timezone.utc)
    since = max(start, now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=settings.ANALYSIS_FRESH_HOURS))
    if end <= since:
        return Freshness()
    hours, stale, resting = _check(project_id, since, end, rest=not wait)
    if not wait and all(_busy(mark) for mark in stale.values()):
        _in_background(project_id, list(stale), _checked_at(hours))
        return Freshness(_newest(hours), left=len(stale) + resting)
    with _lock:
        hours, stale, resting = _check(project_id, since, end, rest=not wait)  # another thread may have done them
        done = _materialize(project_id, {hour: mark for hour, mark in stale.items() if wait or not _busy(mark)},
                            _checked_at(hours), budget=not wait)
    _in_background(project_id, [hour for hour in stale if hour not in done], _checked_at(hours))
    return Freshness(_newest(hours), materialized=len(done), left=len(stale) - len(done) + resting)


def idle(timeout: float) -> bool:
    """Wait until no background refresh runs in this process (at most `timeout` seconds); whether none does."""
    with _done:
        return _done.wait_for(lambda: not _pending, timeout)


def _check(project_id: int, since: datetime, end: datetime,
           rest: bool = True) -> tuple[list[dict], dict[datetime, tuple | None], int]:
    """(the hours' rows, the stale hours newest first with their marks, how many stale ones rest: see _state; none
    when not `rest`, then they are stale). The marks are read in one cache call: with Redis, one round trip per read,
    not per hour."""
    params = {"project_id": project_id, "since": utc_naive(since), "end": utc_naive(end)}
    rows = client.query(_sql("hour_freshness"), parameters=params)
    for row in rows:
        for name in ("hour", "ingested_at", "computed_at", "checked_at"):
            row[name] = _aware(row[name])
    marks = cache.get_many([_mark_key(project_id, row["hour"]) for row in rows]) if rows else {}
    states = [(row, _state(row, marks.get(_mark_key(project_id, row["hour"])))) for row in rows]
    if not rest:
        states = [(row, "stale" if state == "resting" else state) for row, state in states]
    stale = {row["hour"]: marks.get(_mark_key(project_id, row["hour"])) for row, state in states if state == "stale"}
    return rows, stale, sum(state == "resting" for _, state in states)


def _state(row: dict, mark: tuple | None) -> str:
    """"fresh", "stale" (spans newer than, or just before, the hour's last materialization: by materialized_hours'
    computed_at or the mark refresh() left), or "resting": stale, but its last
    on-demand materialization took over REST_FLOOR and began less than twice its duration (BUSY_REST at least) ago.
    TRICKY: under steady traffic every read finds new spans; resting keeps a busy hour (seconds to materialize)
    from being redone back to back, so its reads lag by about that duration at most, a quiet project's not at all."""
    seen = [m for m in (row["computed_at"], mark and mark[0]) if m is not None]
    if seen and row["ingested_at"] < max(seen) - OVERLAP:
        return "fresh"
    # mark: (checked at, took); the minute job's marks have no check time: its run began at the hour's computed_at
    began = mark and (mark[0] or row["computed_at"])
    if began and mark[1] >= REST_FLOOR and row["checked_at"] < began + max(2 * mark[1], BUSY_REST):
        return "resting"
    return "stale"


def _busy(mark: tuple | None) -> bool:
    """Whether the hour's last run (on demand or the minute job's) took REST_FLOOR or more: a read does not wait for
    the next one."""
    return bool(mark) and mark[1] >= REST_FLOOR


def _materialize(project_id: int, stale: dict[datetime, tuple | None], checked_at: datetime | None,
                 budget: bool = True) -> list[datetime]:
    """Materialize the stale hours newest first (the window's tail matters most) while the next one, by its last
    duration, fits the budget (every one when not `budget`); returns those done (the rest go to the background)."""
    deadline = time.monotonic() + settings.ANALYSIS_FRESH_BUDGET_SECONDS
    done = []
    for hour, mark in stale.items():
        if budget and time.monotonic() + (mark[1].total_seconds() if mark else 0) >= deadline:
            break
        materialize_hour(project_id, hour, checked_at)
        done.append(hour)
    return done


def materialize_hour(project_id: int, hour: datetime, checked_at: datetime | None = None,
                     now: datetime | None = None) -> int:
    """Materialize one hour and mark it: the check's time (spans ingested since are newer; None from the minute job,
    whose run materialized_hours dates) and how long it took, so that the first read after the minute job already
    knows a busy hour and leaves it to the background. Returns materialize()'s row count."""
    began = time.monotonic()
    rows = materialize(project_id, hour, hour + HOUR, now)
    took = timedelta(seconds=time.monotonic() - began)
    cache.set(_mark_key(project_id, hour), (checked_at, took), timeout=(settings.ANALYSIS_FRESH_HOURS + 2) * 3600)
    return rows


def _in_background(project_id: int, hours: list[datetime], checked_at: datetime | None) -> None:
    """Materialize the hours in a thread of their own, unless one already does that hour: reads never wait for them.
    Not under _lock: a quiet project's refresh must not wait behind a busy one's."""
    with _pending_lock:
        new = [hour for hour in hours if (project_id, hour) not in _pending]
        _pending.update((project_id, hour) for hour in new)
    if new:
        threading.Thread(target=_background, args=(project_id, new, checked_at), name="freshness", daemon=True).start()


def _background(project_id: int, hours: list[datetime], checked_at: datetime | None) -> None:
    client.bind_reader(BACKGROUND_ROLE)
    priority.background()
    try:
        for hour in hours:
            materialize_hour(project_id, hour, checked_at)
    except Exception:  # the minute job materializes them anyway; a read must never see this thread's failure
        log.exception("background refresh of project %s failed", project_id)
    finally:
        connections.close_all()  # this thread's Django DB connections (the aggregates' queue)
        with _done:
            _pending.difference_update((project_id, hour) for hour in hours)
            _done.notify_all()


def _checked_at(rows: list[dict]) -> datetime | None:
    return rows[0]["checked_at"] if rows else None


def _newest(rows: list[dict]) -> datetime | None:
    return max((row["ingested_at"] for row in rows), default=None)


def _mark_key(project_id: int, hour: datetime) -> str:
    return f"freshness:{project_id}:{hour:%Y%m%d%H}"


def _aware(moment: datetime | None) -> datetime | None:
    """A store datetime as aware UTC; the 1970 a LEFT JOIN gives for no match as None."""
    if moment is None or moment.year <= EPOCH_YEAR:
        return None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
