"""Celery wrappers of analysis/jobs.py: JSON arguments in, a small summary out (schedule: latency_obs/celery.py)."""
from datetime import datetime, timezone

from celery import shared_task

from analysis import jobs
from store.client import ClickHouseError

# ClickHouse being briefly unreachable is the one failure worth retrying; anything else is a bug.
TRANSIENT = {"autoretry_for": (ClickHouseError,), "retry_backoff": True, "max_retries": 3}


def _now() -> datetime:
    return datetime.now(timezone.utc)


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def materialize_request_buckets() -> dict:
    return jobs.materialize_since_watermark(_now())


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def diagnose_recent_windows() -> dict:
    start, end = jobs.recent_window(_now())
    return {"window": [start.isoformat(), end.isoformat()], "verdicts": jobs.diagnose_active(start, end)}


@shared_task(acks_late=True, soft_time_limit=900, **TRANSIENT)
def rollup_last_hour() -> dict:
    start, end = jobs.last_full_hour(_now())
    return {"window": [start.isoformat(), end.isoformat()], "verdicts": jobs.diagnose_active(start, end)}


@shared_task(acks_late=True, soft_time_limit=120, **TRANSIENT)
def diagnose_window(project_id: int, service: str, start: str, end: str) -> dict:
    """One service and window on demand (ISO times); returns the verdict."""
    row = jobs.diagnose_window(project_id, service, datetime.fromisoformat(start), datetime.fromisoformat(end))
    return {"id": row.id, "verdict": row.verdict}
