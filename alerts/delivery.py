"""One webhook POST per call; the Celery task (alerts/tasks.py) retries with the delay it returns."""
import email.utils
import json
import random
import time
from datetime import datetime, timezone

import urllib3
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone as dj_timezone

from alerts import http, payloads
from alerts.models import Delivery, Webhook
from alerts.validation import checked_target

RETRY_AFTER_CAP_S = 300.0
BACKOFF_CAP_S = 300.0
USER_AGENT = "latency_obs-webhooks/1"


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or HTTP date), capped; None if unusable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), RETRY_AFTER_CAP_S)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    seconds = (when - (now or datetime.now(timezone.utc))).total_seconds()
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_S)


def backoff_delay(attempt: int) -> float:
    """Exponential from WEBHOOK_BACKOFF_BASE_MS, capped, with jitter so receivers are not hit in lockstep."""
    delay = min(settings.WEBHOOK_BACKOFF_BASE_MS / 1000 * 2 ** (attempt - 1), BACKOFF_CAP_S)
    return random.uniform(delay / 2, delay)


def _request(webhook: Webhook, delivery: Delivery) -> tuple[bytes, dict]:
    if webhook.kind == Webhook.SLACK:
        body = json.dumps(payloads.slack_message(delivery.payload), sort_keys=True).encode()
        headers = {"Content-Type": "application/json"}
    else:
        body = payloads.json_body(delivery.event, delivery.payload)
        headers = payloads.json_headers(webhook.secret, delivery.event, body, int(time.time()))
    return body, {**headers, "User-Agent": USER_AGENT}


def _finish(delivery: Delivery, status: str, code: int | None, error: str) -> None:
    delivery.status, delivery.last_status_code, delivery.last_error = status, code, error[:2000]
    if status == Delivery.SENT:
        delivery.sent_at = dj_timezone.now()
    delivery.save(update_fields=["status", "attempts", "last_status_code", "last_error", "sent_at"])


def deliver(delivery_id: int) -> float | None:
    """Try once. Returns seconds to wait before the next try, or None when the delivery is sent or failed."""
    delivery = Delivery.objects.select_related("webhook").get(id=delivery_id)
    if delivery.status != Delivery.PENDING:
        return None  # a duplicate run of the task: already settled
    webhook = delivery.webhook
    delivery.attempts += 1
    if not webhook.enabled:
        _finish(delivery, Delivery.FAILED, None, "webhook disabled")
        return None
    try:
        # again at send time: the host's DNS may now point somewhere private
        url, address = checked_target(webhook.url)
    except ValidationError as exc:
        _finish(delivery, Delivery.FAILED, None, f"URL refused: {' '.join(exc.messages)}")
        return None
    body, headers = _request(webhook, delivery)
    retry_after = None
    try:
        response = http.post(url, address, body, headers, settings.WEBHOOK_TIMEOUT_SECONDS)
    except urllib3.exceptions.HTTPError as exc:
        code, error = None, f"{type(exc).__name__}: {exc}"
    else:
        code, error = response.status, response.text[:500]
        if 200 <= code < 300:
            _finish(delivery, Delivery.SENT, code, "")
            return None
        if code != 429 and code < 500:
            reason = "redirect not followed" if 300 <= code < 400 else "refused by the receiver"
            _finish(delivery, Delivery.FAILED, code, f"{reason}: {error}")
            return None
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
    if delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        _finish(delivery, Delivery.FAILED, code, f"gave up after {delivery.attempts} attempts: {error}")
        return None
    _finish(delivery, Delivery.PENDING, code, error)
    return retry_after if retry_after is not None else backoff_delay(delivery.attempts)


def enqueue(webhook: Webhook, event: str, payload: dict) -> Delivery:
    """Log the delivery and send it from Celery once the caller's transaction commits."""
    from alerts.tasks import send_delivery  # the task module imports this one

    delivery = Delivery.objects.create(webhook=webhook, event=event, payload=payload)
    transaction.on_commit(lambda: send_delivery.delay(delivery.id))
    return delivery


def send_test(webhook: Webhook, url: str = "") -> Delivery:
    """The 'send test notification' button."""
    return enqueue(webhook, "test", {
        "title": f"Test notification from latency_obs ({webhook.project.name})",
        "verdict": "test", "numbers": {"webhook": webhook.name}, "url": url,
        "context": "If you can read this, the webhook works.",
    })
