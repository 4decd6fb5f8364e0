"""Celery wrapper of budgets/evaluation.py (schedule: latency_obs/celery.py, as a step of the minute pipeline)."""
from celery import shared_task

from analysis.fairness import step_deadline
from analysis.tasks import TRANSIENT, instant
from budgets.evaluation import evaluate_recent


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def evaluate_recent_budgets(now: str | None = None) -> dict:
    """Every budget over the same recent window as diagnose_recent_windows; `now` ISO 8601, default the clock."""
    return evaluate_recent(instant(now), step_deadline("budgets"))
