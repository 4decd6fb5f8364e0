"""The scheduler sweeps of the services a job diagnoses over one window, read BATCH services at a time.

A diagnosis's longest read is its scheduler sweep (analysis/diagnosis/evidence.py), and over the minute job's 15-minute window
most of a sweep's time is planning: on the 10M-span bench day, ten services' sweeps took 1.87 s one by one and
0.40 s in one read. The diagnose jobs (analysis/work/jobs.py) hand their queues through `announced`, which tells this
module the next BATCH services of a project as the job takes them; the first of them whose diagnosis asks for its
sweep (`sweep`) reads the batch's, and each of the others takes its own from that read. A sweep asked for anything
else (another window, width or limit, a service not announced, no job around) is read alone, as before.
"""
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from datetime import datetime
from itertools import islice
from threading import Lock

from analysis.reads import queries
from analysis.scope import Scope
from analysis.windows import utc_naive

# rows per service are bounded by the width (a series' points) x (ANALYSIS_TOP_N + 1): ~3,800 for 15 minutes
BATCH = 16


class Batches:
    """The announced services of each project for one window, and the sweeps read for them not yet taken."""

    def __init__(self, start: datetime, end: datetime):
        self.start, self.end = utc_naive(start), utc_naive(end)  # as a Scope's, whatever the spelling
        self._next: dict[int, list[str]] = {}  # project -> the services announced and not yet read
        self._read: dict[tuple, dict] = {}  # (project, service, bucket_ms, limit) -> its sweep, until taken
        self._lock = Lock()  # a diagnosis asks on a reader thread (store/concurrent.py)

    def announce(self, project_id: int, services: list[str]) -> None:
        """The project's next services; sweeps read for its earlier ones and not taken (a diagnosis that did not
        get that far) are dropped."""
        with self._lock:
            self._next[project_id] = list(services)
            self._read = {key: rows for key, rows in self._read.items() if key[0] != project_id}

    def sweep(self, scope: Scope, bucket_ms: int, limit: int | None) -> dict:
        project_id, service = scope.project_id, scope.service
        key = (project_id, service, bucket_ms, limit)
        with self._lock:
            if key not in self._read and (utc_naive(scope.start), utc_naive(scope.end)) == (self.start, self.end) \
                    and service in self._next.get(project_id, ()):
                services = self._next.pop(project_id)
                self._read.update({(project_id, s, bucket_ms, limit): rows for s, rows in queries.scheduler_sweeps(
                    replace(scope, service=""), services, bucket_ms, limit).items()})
            answer = self._read.pop(key, None)
        if answer is None:
            return queries.scheduler_sweep(scope, bucket_ms, limit)
        return answer


_batches: ContextVar[Batches | None] = ContextVar("sweep_batches", default=None)


@contextmanager
def batched(start: datetime, end: datetime) -> Iterator[Batches]:
    """Within the block (and the reader threads it starts), sweeps over [start, end) of announced services are read
    by batch."""
    batches = Batches(start, end)
    token = _batches.set(batches)
    try:
        yield batches
    finally:
        _batches.reset(token)


def announced(queue: Iterator, service_of: Callable[[object], tuple[int, str]]) -> Iterator:
    """`queue`'s units (one project's; service_of(unit): its (project, service)), taken BATCH at a time: each batch's
    services are announced before its first unit is run."""
    while chunk := list(islice(queue, BATCH)):
        if (batches := _batches.get()) is not None:
            batches.announce(service_of(chunk[0])[0], [service_of(unit)[1] for unit in chunk])
        yield from chunk


def sweep(scope: Scope, bucket_ms: int, limit: int | None = None) -> dict:
    """queries.scheduler_sweep of the scope's service, from its batch's read when a job announced it for this
    window."""
    batches = _batches.get()
    if batches is None:
        return queries.scheduler_sweep(scope, bucket_ms, limit)
    return batches.sweep(scope, bucket_ms, limit)
