"""The pages' kept answers read again before the next view needs them (DASHBOARD_READ_AHEAD).

versions.kept() keeps an answer while its window's data is unchanged, so a page viewed again costs two small reads.
The view after a change still paid the whole read: under steady ingest a new materialization lands about once a
minute, and a window ending now moves on every minute, so one view in a few of a 24 h Diagnosis took its ~1 CPU-s of
planning and scans, 0.9-1.2 s with the sender and the minute jobs on the two cores (`make bench-live`). Here a thread
of the web process replays, every TICK_SECONDS, the reads pages asked for in the last WATCH_SECONDS
(versions.watched): for each one whose answer for the window as a page would ask it now is not kept, it does what
a page does first (freshness.refresh) and reads it, so the member's next view finds it kept. New spans alone do not
make it read: until the minute job or a background refresh materializes them the reads would see what they saw (a
quiet project's next view materializes them itself, at the cost of its own reads, as without this thread).

The thread asks the store one small read per watched window a tick (versions.window_version) while nothing changes,
with a ClickHouse client of its own, and its reads' gather()s run on the reader threads as a page's do: a view that
comes while the thread reads its answer waits for that read (versions.kept) rather than reading it again. A failure is logged and the next tick tries again: a page reads for itself, as without this thread.
"""
import logging
import threading
import time

from django.conf import settings
from django.db import connections

from analysis.reads import versions
from analysis.rollups import aggregates, freshness
from store import client

TICK_SECONDS = 1.0
WATCH_SECONDS = 300  # a page not viewed for this long is not read ahead any more
ROLE = "ahead"  # not "read-...": its gather()s use the reader threads (store/concurrent.py)
_lock = threading.Lock()
_thread: threading.Thread | None = None
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
    while settings.DASHBOARD_READ_AHEAD:  # turned off at run time (a test's): the thread ends
        time.sleep(TICK_SECONDS)
        try:
            read_ahead()
        except Exception:  # noqa: BLE001 -- a page reads for itself; the next tick tries again
            log.exception("reading ahead failed")
        finally:
            connections.close_all()  # this thread's Django DB connections (a diagnosis's cost, an objective)


def read_ahead() -> int:
    """One pass: read the watched answers that are not kept for their window as a page would ask it now, the latest
    asked first; returns how many were read."""
    pending = []
    with aggregates.shared_reads():  # one version read per window, however many reads watch it
        for watched in versions.watched(WATCH_SECONDS):
            scope = watched.now()
            if not versions.is_kept(watched.name, scope, watched.args):
                pending.append((watched, scope))
    began = time.monotonic()
    for watched, scope in pending:
        freshness.refresh(scope.project_id, scope.start, scope.end)  # what a page does before its reads
        with aggregates.shared_reads():
            versions.kept(watched.name, scope, watched.args, watched.read)
    if pending:
        log.info("read ahead %d answers in %.2f s: %s", len(pending), time.monotonic() - began,
                 ", ".join(f"{w.name.replace('analysis.panels.', '')} {(s.end - s.start).total_seconds() / 3600:g} h"
                           for w, s in pending))
    return len(pending)
