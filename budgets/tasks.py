"""Celery wrapper of budgets/evaluation.py (schedule: latency_obs/celery.py)."""
from celery import shared_task

from analysis.windows import recent_window
from analysis.tasks import TRANSIENT, _now
from budgets.evaluation import evaluate_active


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def evaluate_recent_budgets() -> dict:
    """Every budget over the same recent window as diagnose_recent_windows."""
    start, end = recent_window(_now())
    return {"window": [start.isoformat(), end.isoformat()], **evaluate_active(start, end)}
