"""What the minute jobs still have to do, kept in the Django DB so that a run out of time leaves it to the next.

Two queues, filled from the spans' ingested_at (the store's clock) since a watermark of each step:

- DirtyHour: (project, hour) pairs whose request_buckets rows are stale. The materialize step queues the hours
  of the spans ingested since its watermark minus WATERMARK_OVERLAP, then materializes them.
- PendingDiagnosis: (project, service) pairs with spans ingested after the diagnose step's watermark and up to
  the materialize step's, starting in the recent window. Only services with new spans are diagnosed; one found
  again while it waits keeps its place.

Each step serves projects in turns (analysis/fairness.py): the project whose oldest queued unit has waited
longest first, then one unit per project per turn, read from the DB a page at a time as the run gets to it.
"""
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from django.db import transaction
from django.db.models import Count, Min, QuerySet

from analysis.models import DirtyHour, JobWatermark, PendingDiagnosis
from analysis.rollups.materialize import dirty_hours, store_now
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from projects.models import Project
from store import client

# TRICKY: an INSERT stamps ingested_at when it starts and its rows appear when it ends, so rows stamped just
# before a watermark may show up after it was read: the materialize step looks this far behind its mark.
WATERMARK_OVERLAP = timedelta(minutes=2)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
HOUR = timedelta(hours=1)
PAGE = 50  # units read from the DB at a time for one project
STARVED = timedelta(minutes=2)  # a dirty hour queued this long ago goes before the newest (dirty_hour_queues)
MATERIALIZE, DIAGNOSE = "materialize", "diagnose"  # the steps' JobWatermark names
MAX_SERVICE_LENGTH = PendingDiagnosis._meta.get_field("service").max_length


def queue_dirty_hours(now: datetime) -> int:
    """Queue the (project, hour) pairs that got spans since the materialize watermark (minus the overlap), then
    move the mark to the store's clock; returns how many were found (already queued ones included)."""
    with transaction.atomic():
        mark = _watermark(MATERIALIZE)
        until = store_now()
        found = dirty_hours(mark.at - WATERMARK_OVERLAP)
        known = _known_projects({p for p, _ in found})
        DirtyHour.objects.bulk_create([DirtyHour(project_id=p, hour=h, queued_at=now) for p, h in found if p in known],
                                      ignore_conflicts=True, batch_size=1000)
        mark.at = until
        mark.save(update_fields=["at"])
    return len(found)


def dirty_hour_queues(now: datetime | None = None) -> list[Iterator[DirtyHour]]:
    """One queue per project with dirty hours, newest hour first (the recent window's buckets matter most), except
    that hours queued STARVED or longer before `now` come first, longest waiting first; projects in the order of
    their oldest queued hour.
    TRICKY: a burst keeps its newest hour dirty every minute, and one busy hour fills the step's budget: newest first
    alone left the burst's earlier hours (and the incidents judged on them) waiting until the burst ended."""
    def queue(project_id: int) -> Iterator[DirtyHour]:
        rows = DirtyHour.objects.filter(project_id=project_id)
        waited = list(rows.filter(queued_at__lte=now - STARVED).order_by("queued_at", "-hour")) if now else []
        yield from waited
        yield from (row for row in _paged(rows, "-hour") if row not in waited)
    return [queue(p) for p in _projects_by_wait(DirtyHour.objects)]


def queue_new_services(now: datetime, start: datetime) -> int:
    """Queue the services with spans ingested after the diagnose watermark and up to the materialize one (so
    their hours are materialized or queued for it) that start in the window from `start`; returns how many.

    TRICKY: there is no overlap here, which would diagnose a flood again: a span that becomes visible after
    both marks passed its ingested_at is materialized (the materialize overlap) but finds its service only with
    that service's next spans."""
    with transaction.atomic():
        mark = _watermark(DIAGNOSE)
        until = JobWatermark.objects.filter(name=MATERIALIZE).values_list("at", flat=True).first() or EPOCH
        if until <= mark.at:
            return 0
        params = {"since": utc_naive(mark.at), "until": utc_naive(until), "start": utc_naive(start)}
        found = [(int(p), s) for p, s in client.query_rows(_sql("services_with_new_spans"), parameters=params)]
        known = _known_projects({p for p, _ in found})
        # a name longer than the column cannot be stored as a diagnosis either; it is left out, not truncated
        rows = [PendingDiagnosis(project_id=p, service=s, queued_at=now, seen_at=now)
                for p, s in found if p in known and len(s) <= MAX_SERVICE_LENGTH]
        PendingDiagnosis.objects.bulk_create(rows, update_conflicts=True, unique_fields=["project", "service"],
                                             update_fields=["seen_at"], batch_size=1000)
        mark.at = until
        mark.save(update_fields=["at"])
    return len(rows)


def expire_pending_diagnoses(start: datetime) -> int:
    """Drop the queued services whose newest spans were found over an hour before the window's `start`: their
    traffic has left the recent window, so there is nothing left to diagnose. Returns how many."""
    return PendingDiagnosis.objects.filter(seen_at__lt=start - HOUR).delete()[0]


def pending_diagnosis_queues(start: datetime) -> list[Iterator[PendingDiagnosis]]:
    """One queue per project, oldest first; projects in the order of their oldest queued service. A project
    with a dirty hour that the window from `start` reads is left out: its buckets are not there yet."""
    waiting = set(DirtyHour.objects.filter(hour__gte=start - HOUR).values_list("project_id", flat=True))
    projects = [p for p in _projects_by_wait(PendingDiagnosis.objects) if p not in waiting]
    return [_paged(PendingDiagnosis.objects.filter(project_id=p), "id") for p in projects]


def _watermark(name: str) -> JobWatermark:
    """The step's watermark row, locked until the caller's transaction ends (two runs find each span once)."""
    return JobWatermark.objects.select_for_update().get_or_create(name=name, defaults={"at": EPOCH})[0]


def _known_projects(ids: set[int]) -> set[int]:
    """The ids that are projects: spans of a deleted project have nowhere to go."""
    return set(Project.objects.filter(pk__in=ids).values_list("pk", flat=True)) if ids else set()


def _projects_by_wait(rows) -> list[int]:
    """Project ids of the queued rows, the one whose oldest row has waited longest first; among those queued by the
    same run, the one with fewer rows queued first (then the lowest id).

    TRICKY: a flood and a small project's one service are queued by the same run. By row id alone the flood came
    first in every run, and when its first unit takes the whole budget (a batch of its sweeps on a loaded machine:
    3 s of a 2 s budget under make test's load, 2026-11-30) the small project waited for as many runs."""
    by_wait = rows.values("project_id").annotate(since=Min("queued_at"), queued=Count("id"), first=Min("id"))
    return list(by_wait.order_by("since", "queued", "first").values_list("project_id", flat=True))


def _paged(rows: QuerySet, order: str) -> Iterator:
    """`rows` ordered by one field unique among them ("id", or "-hour" descending), PAGE at a time."""
    field, after = order.lstrip("-"), ("__lt" if order.startswith("-") else "__gt")
    last = None
    while True:
        page = rows.order_by(order)
        if last is not None:
            page = page.filter(**{field + after: last})
        page = list(page[:PAGE])
        yield from page
        if len(page) < PAGE:
            return
        last = getattr(page[-1], field)
