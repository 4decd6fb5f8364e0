"""Celery wrapper of alerts/delivery.py: one POST per run, retried with the delay deliver() returns."""
from celery import shared_task
from django.conf import settings

from alerts.delivery import deliver
from alerts.models import Delivery


# deliver() counts attempts and gives up itself; max_retries is only a safety net above it
@shared_task(bind=True, acks_late=True, soft_time_limit=120, max_retries=settings.WEBHOOK_MAX_ATTEMPTS)
def send_delivery(self, delivery_id: int) -> dict:
    delay = deliver(delivery_id)
    if delay is not None:
        raise self.retry(countdown=delay)
    return {"id": delivery_id, "status": Delivery.objects.values_list("status", flat=True).get(id=delivery_id)}
