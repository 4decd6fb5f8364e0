"""What the periodic analysis jobs do (analysis/tasks.py wraps these for Celery).

Every minute (the first two steps of the minute pipeline, latency_obs/pipeline.py): materialize the request
buckets of the hours that received spans since the last run, then diagnose the services that received spans
since the last run over the recent window. Every five minutes: diagnose the last full hour's services that have
no diagnosis of it yet. Each takes a Deadline (its time budget) and serves projects in turns
(analysis/fairness.py); what a run leaves stays queued (analysis/work/backlog.py) or unstored, and the next run
starts with it. Results replace earlier ones for the same window, so a job may be rerun at will.
"""
from datetime import datetime

from analysis.diagnosis.service import run_diagnosis
from analysis.errors import AnalysisError
from analysis.fairness import Deadline, by_project, run_in_turns
from analysis.models import DirtyHour, PendingDiagnosis, WindowDiagnosis
from analysis.reads import sweeps
from analysis.reads.queries import active_services
from analysis.rollups import aggregates, freshness
from analysis.scope import Scope
from analysis.windows import last_full_hour, recent_window
from analysis.work import backlog
from store import client, priority

# The jobs' ClickHouse client, a client of its own: a client serialises its calls (store/client.py), and the minute
# jobs' statements take seconds, which the pages' reads (the "default" client of the web threads) must not queue
# behind: in `make bench-live` (5,000 spans/s) a page waited up to a whole materialization (30-120 s) for it. The
# role starts with "read-", so its gather()s run in place (store/concurrent.py) instead of on the reader threads the
# pages' reads use: the jobs run one statement at a time.
JOBS_ROLE = "read-jobs"


def run_as_jobs_thread() -> None:
    """This thread (the embedded worker's) runs the jobs: it reads and writes ClickHouse through the jobs' own client,
    at the background threads' priority (store/priority.py), below the web threads'."""
    client.bind_reader(JOBS_ROLE)
    priority.background()


def materialize_since_watermark(now: datetime, deadline: Deadline | None = None) -> dict:
    """The minute job: queue the hours that got spans since the last run, then materialize queued hours (one SQL
    per project and hour, whatever the number of services), projects in turns, until the deadline; then, in the
    time left, aggregate the hours that have settled since they were materialized (analysis/rollups/aggregates.py).

    Returns {"hours": materialized, "rows": their rows afterwards, "projects": sorted ids served, "found": hours
    found dirty this run, "deferred": hours still queued, "aggregated": settled hours aggregated, "errors": hours
    that raised (kept queued)}."""
    found = backlog.queue_dirty_hours(now)
    rows, projects = 0, set()

    def unit(dirty: DirtyHour) -> str:
        nonlocal rows
        rows += freshness.materialize_hour(dirty.project_id, dirty.hour, now=now)  # marks its duration for reads
        projects.add(dirty.project_id)
        dirty.delete()
        return "materialized"

    deadline = deadline or Deadline(None)
    tally = run_in_turns(backlog.dirty_hour_queues(now), unit, deadline, "materialize")
    settled = run_in_turns(by_project(aggregates.settled_hours(now)), aggregates.aggregate_queued, deadline, "aggregate")
    return {"hours": tally.done, "rows": rows, "projects": sorted(projects), "found": found,
            "deferred": DirtyHour.objects.count(), "aggregated": settled.done,
            "errors": tally.errors + settled.errors}


def diagnose_window(project_id: int, service: str, start: datetime, end: datetime) -> WindowDiagnosis:
    """Diagnose one service over [start, end) and keep the result (replacing an earlier one)."""
    result = run_diagnosis(Scope(project_id, service, start, end))
    row, _ = WindowDiagnosis.objects.update_or_create(
        project_id=project_id, service=service, start=start, end=end,
        defaults={"verdict": result["verdict"], "result": result},
    )
    return row


def verdict(project_id: int, service: str, start: datetime, end: datetime) -> str:
    """diagnose_window's verdict, or the reason when there is nothing to diagnose (unknown_service: the window's
    traffic is gone, e.g. left the window or retention)."""
    try:
        return diagnose_window(project_id, service, start, end).verdict
    except AnalysisError as exc:
        return exc.reason


def diagnose_recent(now: datetime, deadline: Deadline | None = None) -> dict:
    """The minute job: the services with spans not yet diagnosed, each over the recent window ending at `now`'s
    minute, projects in turns, until the deadline. A service without new spans keeps its latest diagnosis.

    Returns {"window": [start, end] (ISO), "verdicts": {verdict: count}, "found": services with new spans this
    run, "expired": queued ones whose traffic left the window, "deferred": still queued, "errors"}."""
    start, end = recent_window(now)
    found = backlog.queue_new_services(now, start)
    expired = backlog.expire_pending_diagnoses(start)

    def unit(pending: PendingDiagnosis) -> str:
        try:
            return verdict(pending.project_id, pending.service, start, end)
        finally:  # also when it raised: the service's next spans queue it again
            pending.delete()

    with sweeps.batched(start, end):  # the services' scheduler sweeps are read a batch at a time
        queues = [sweeps.announced(queue, lambda pending: (pending.project_id, pending.service))
                  for queue in backlog.pending_diagnosis_queues(start)]
        tally = run_in_turns(queues, unit, deadline or Deadline(None), "diagnose")
    return {"window": [start.isoformat(), end.isoformat()], "verdicts": dict(tally.outcomes), "found": found,
            "expired": expired, "deferred": PendingDiagnosis.objects.count(), "errors": tally.errors}


def diagnose_active(start: datetime, end: datetime, deadline: Deadline | None = None) -> dict:
    """Diagnose each service with traffic in [start, end) that has no stored diagnosis of exactly this window,
    projects in turns (services by name), until the deadline; a rerun goes on where the last one stopped.
    Returns {"verdicts": {verdict: count}, "deferred": services left, "errors"}."""
    stored = set(WindowDiagnosis.objects.filter(start=start, end=end).values_list("project_id", "service"))
    todo: dict[int, list[str]] = {}
    for project_id, service in active_services(start, end):
        if (project_id, service) not in stored:
            todo.setdefault(project_id, []).append(service)
    with sweeps.batched(start, end):  # the services' scheduler sweeps are read a batch at a time
        queues = [sweeps.announced(iter([(p, s) for s in services]), lambda unit: unit) for p, services in todo.items()]
        tally = run_in_turns(queues, lambda unit: verdict(*unit, start, end), deadline or Deadline(None), "rollup")
    left = sum(map(len, todo.values())) - tally.done - tally.errors
    return {"verdicts": dict(tally.outcomes), "deferred": left, "errors": tally.errors}


def diagnose_last_hour(now: datetime, deadline: Deadline | None = None) -> dict:
    """The rollup: the last full hour before `now`, as diagnose_active. Returns {"window": [start, end] (ISO),
    "verdicts", "deferred", "errors"}."""
    start, end = last_full_hour(now)
    return {"window": [start.isoformat(), end.isoformat()], **diagnose_active(start, end, deadline)}
