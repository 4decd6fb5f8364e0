"""Celery tasks of the alerts app: the immediate try of a new delivery, the outbox sweeper that sends every due
delivery (alerts/delivery.py), and the minute evaluation of the alert rules (alerts/rules.py)."""
from celery import shared_task
from django.conf import settings

from alerts.delivery import LEASE_MARGIN_S, SWEEP_SECONDS, deliver, send_due
from alerts.models import Delivery
from alerts.rules import evaluate_all
from analysis.tasks import TRANSIENT, _now

# stopped before the claim runs out, so no second sender starts while this one still posts
TRY_LIMIT_S = settings.WEBHOOK_TIMEOUT_SECONDS + LEASE_MARGIN_S // 2


@shared_task(acks_late=True, soft_time_limit=TRY_LIMIT_S)
def send_delivery(delivery_id: int) -> dict:
    """The first try, queued when the delivery's transaction commits. No Celery retries: a failed try sets the
    row's next_attempt_at and the sweeper sends it then; a no-op when the sweeper claimed it first."""
    retry_in_s = deliver(delivery_id)
    status = Delivery.objects.values_list("status", flat=True).get(id=delivery_id)
    return {"id": delivery_id, "status": status, "retry_in_s": retry_in_s}


@shared_task(acks_late=True, soft_time_limit=SWEEP_SECONDS + TRY_LIMIT_S)
def send_due_deliveries() -> dict:
    """Every 15 s (beat: latency_obs/celery.py): the outbox's due deliveries, whichever process created them."""
    return send_due()


@shared_task(acks_late=True, soft_time_limit=50, **TRANSIENT)
def evaluate_alert_rules() -> dict:
    """Every minute, after the diagnoses (beat: latency_obs/celery.py): alert rules over the recent window."""
    return evaluate_all(_now())
