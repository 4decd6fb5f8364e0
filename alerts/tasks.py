"""Celery tasks of the alerts app, found here by autodiscovery: the minute evaluation of the alert rules
(alerts/rules.py), and the two delivery tasks defined beside enqueue() in alerts/delivery.py."""
from celery import shared_task

from alerts.delivery import send_delivery, send_due_deliveries
from alerts.rules import evaluate_all
from analysis.fairness import step_deadline
from analysis.tasks import TRANSIENT, instant

__all__ = ["evaluate_alert_rules", "send_delivery", "send_due_deliveries"]


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def evaluate_alert_rules(now: str | None = None) -> dict:
    """Alert rules over the recent window ending at `now` (ISO 8601, default the clock); every minute as the last
    step of the minute pipeline (latency_obs/pipeline.py), which reads the budgets and diagnoses stored first."""
    return evaluate_all(instant(now), step_deadline("alert_rules"))
