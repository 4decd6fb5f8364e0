"""Celery wrappers of analysis/work/jobs.py: JSON arguments in, a small summary out (schedule: latency_obs/celery.py).

The minute jobs take an optional `now` (ISO 8601): the minute pipeline (latency_obs/pipeline.py) runs their
functions with one `now`; run alone, a task uses the clock. Each runs within its time budget, as in the pipeline.
"""
from datetime import datetime, timezone

from celery import shared_task
from django.conf import settings

from analysis.fairness import Deadline, step_deadline
from analysis.incidents.jobs import judge_queued
from analysis.windows import parse_instant
from analysis.work import jobs
from store.client import ClickHouseError

# ClickHouse being briefly unreachable is the one failure worth retrying; anything else is a bug.
TRANSIENT = {"autoretry_for": (ClickHouseError,), "retry_backoff": True, "max_retries": 3}


def _now() -> datetime:
    return datetime.now(timezone.utc)


def instant(now: str | None) -> datetime:
    """A task's `now` argument (ISO 8601) as an aware UTC datetime; the clock when it is None."""
    return parse_instant(now, "now") if now else _now()


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def materialize_request_buckets(now: str | None = None) -> dict:
    return jobs.materialize_since_watermark(instant(now), step_deadline("materialize"))


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def diagnose_recent_windows(now: str | None = None) -> dict:
    return jobs.diagnose_recent(instant(now), step_deadline("diagnose"))


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def detect_incidents(now: str | None = None) -> dict:
    return judge_queued(instant(now), step_deadline("incidents"))


# every five minutes, each run within ROLLUP_BUDGET_SECONDS (at most 240) and resuming where the last stopped
@shared_task(acks_late=True, soft_time_limit=300, **TRANSIENT)
def rollup_last_hour(now: str | None = None) -> dict:
    return jobs.diagnose_last_hour(instant(now), Deadline(settings.ROLLUP_BUDGET_SECONDS))


@shared_task(acks_late=True, soft_time_limit=120, **TRANSIENT)
def diagnose_window(project_id: int, service: str, start: str, end: str) -> dict:
    """One service and window on demand (ISO times); returns the verdict."""
    row = jobs.diagnose_window(project_id, service, datetime.fromisoformat(start), datetime.fromisoformat(end))
    return {"id": row.id, "verdict": row.verdict}
