"""Celery tasks of the alerts app: one webhook POST per run (alerts/delivery.py), retried with the delay deliver()
returns, and the minute evaluation of the alert rules (alerts/rules.py)."""
from celery import shared_task
from django.conf import settings

from alerts.delivery import deliver
from alerts.models import Delivery
from alerts.rules import evaluate_all
from analysis.tasks import TRANSIENT, _now


# deliver() counts attempts and gives up itself; max_retries is only a safety net above it
@shared_task(bind=True, acks_late=True, soft_time_limit=120, max_retries=settings.WEBHOOK_MAX_ATTEMPTS)
def send_delivery(self, delivery_id: int) -> dict:
    delay = deliver(delivery_id)
    if delay is not None:
        raise self.retry(countdown=delay)
    return {"id": delivery_id, "status": Delivery.objects.values_list("status", flat=True).get(id=delivery_id)}


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def evaluate_alert_rules() -> dict:
    """Every minute, after the diagnoses (beat: latency_obs/celery.py): alert rules over the recent window."""
    return evaluate_all(_now())
