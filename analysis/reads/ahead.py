"""The pages' kept answers read again before the next view needs them (DASHBOARD_READ_AHEAD).

versions.kept() keeps an answer while its window's data is unchanged, so a page viewed again costs two small reads.
The view after a change still paid the whole read: under steady ingest each minute job and background refresh of
the busy hour makes a new version, and a window ending now moves on every minute, so one view in a few of a 24 h
Diagnosis took its ~1 CPU-s of planning and scans (`make bench-live`: 0.9-1.2 s with the sender and the minute
jobs on the two cores). Here a thread of the web process replays, every TICK_SECONDS, the reads its pages asked for
in the last WATCH_SECONDS (versions.watched): those whose answer for the window as a page would ask it now is not
kept, and in a minute's last LEAD_SECONDS those of a window ending now as a page will ask it next minute. It does
what a page does first (freshness.refresh), then reads them side by side on READERS threads of its own (a view that comes
meanwhile waits for that read rather than reading again, and a view that lags anyway, its hours left stale, gets
the previous version's answer meanwhile: versions.watching). New spans alone do not make it read: until the minute
job or a background refresh materializes them the reads would see what they saw (a quiet project's next view
materializes them itself and reads, as without this thread).

The thread asks the store one small read per watched window a tick (versions.window_version) while nothing changes,
with a ClickHouse client of its own. It and its readers run at the background threads' priority (store/priority.py,
BACKGROUND_NICE): a page's own reads, a view nobody read ahead (a member's first look, the run waterfall), come
first: at the pages' priority (and 15 s ahead of the minute), every page over both windows read ahead kept the
readers busy 20-25 s a minute and 5 of 36 pages went over 500 ms (a run's waterfall, not kept, 0.6 s); at theirs
(and 25 s ahead), 0 of 36 (`make bench-live`). A failure is logged and the next tick tries again: a page reads for itself, as
without this thread.
"""
import itertools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from django.conf import settings
from django.db import connections

from analysis.reads import versions
from analysis.rollups import aggregates, freshness
from store import client, priority

TICK_SECONDS = 1.0
LEAD_SECONDS = 25  # a window ending now is read for the next minute this long before the minute turns
MINUTE = timedelta(minutes=1)
READERS = 2  # answers read side by side: the two cores of the small machine
WATCH_SECONDS = 300  # a page not viewed for this long is not read ahead any more
ROLE = "ahead"  # the ticker's own client: the versions and the freshness checks
_lock = threading.Lock()
_thread: threading.Thread | None = None
_pool: ThreadPoolExecutor | None = None
log = logging.getLogger(__name__)


def start() -> None:
    """Start this process's read-ahead thread unless it runs (or DASHBOARD_READ_AHEAD is off)."""
    global _thread
    if not settings.DASHBOARD_READ_AHEAD or (_thread is not None and _thread.is_alive()):
        return
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="read-ahead", daemon=True)
            _thread.start()


def _run() -> None:
    client.bind_reader(ROLE)
    priority.background()
    while settings.DASHBOARD_READ_AHEAD:  # turned off at run time (a test's): the thread ends
        time.sleep(TICK_SECONDS)
        try:
            read_ahead()
        except Exception:  # noqa: BLE001 -- a page reads for itself; the next tick tries again
            log.exception("reading ahead failed")
        finally:
            connections.close_all()  # this thread's Django DB connections (a diagnosis's cost, an objective)


def read_ahead() -> int:
    """One pass: read the watched answers that are not kept for their window as a page would ask it now (and, in a
    minute's last LEAD_SECONDS, as it will ask it next minute), side by side on READERS threads, the latest asked
    first; returns how many were read."""
    pending = []
    with aggregates.shared_reads():  # one version read per window, however many reads watch it
        for watched in versions.watched(WATCH_SECONDS):
            for scope in _scopes(watched):
                if not versions.is_kept(watched.name, scope, watched.args):
                    pending.append((watched, scope))
    if not pending:
        return 0
    began = time.monotonic()
    for project_id, start, end in dict.fromkeys((s.project_id, s.start, s.end) for _, s in pending):
        freshness.refresh(project_id, start, end)  # what a page does before its reads
    list(_readers().map(lambda item: _read(*item), pending))  # waits for them all; raises the first failure
    log.info("read ahead %d answers in %.2f s: %s", len(pending), time.monotonic() - began,
             ", ".join(f"{w.name.replace('analysis.panels.', '')} {(s.end - s.start).total_seconds() / 3600:g} h"
                       for w, s in pending))
    return len(pending)


def _readers() -> ThreadPoolExecutor:
    """The thread's own reader threads, READERS of them: on the pages' three (store/concurrent.py) a page's reads
    queue behind the dozen answers a pass reads at once (`make bench-live` on a data dir grown to 7.7M spans: the
    Overview's 1 h p95 1.5 s, against 0.1 s on threads of its own on 2M). Their roles start with "read-": the
    gather()s of the reads they run run in place."""
    global _pool
    with _lock:
        if _pool is None:
            roles = itertools.count()
            _pool = ThreadPoolExecutor(READERS, thread_name_prefix="read-ahead",
                                       initializer=lambda: _reader(f"read-ahead-{next(roles)}"))
        return _pool


def _reader(role: str) -> None:
    client.bind_reader(role)
    priority.background()


def _scopes(watched: versions.Watched) -> list:
    """The windows to have kept for a watched read: as a page asks it now, and for a window ending now, in the last
    LEAD_SECONDS of a minute, as it will ask next minute (its answer, read at the version of now, is the one a page
    will get if no new version lands before: the minute's turn then costs the member nothing)."""
    scope = watched.now()
    if watched.rolling and datetime.now(timezone.utc).second >= 60 - LEAD_SECONDS:
        return [scope, replace(scope, start=scope.start + MINUTE, end=scope.end + MINUTE)]
    return [scope]


def _read(watched: versions.Watched, scope) -> None:
    try:
        with aggregates.shared_reads():
            versions.kept(watched.name, scope, watched.args, watched.read)
    finally:
        connections.close_all()  # this reader thread's Django DB connections (a diagnosis's cost, an objective)
