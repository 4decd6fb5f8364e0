"""The outbox: every notification is a Delivery row, and each try of it is one POST made by whoever claims it.

Two paths try a delivery: the immediate task (send_delivery, queued when the creating transaction commits:
low latency while a worker runs) and the beat's sweeper (send_due_deliveries, every 15 s), which sends every
pending delivery whose next_attempt_at is due. Both claim the row first, so a try is POSTed at most once
however many workers and processes run; a delivery created where no worker listens (a CLI process on the
in-memory broker) or due for a retry across a restart is sent by the next sweep. Retries are not Celery
countdowns: a failed try moves next_attempt_at by the backoff or Retry-After delay and the sweeper sends it.

The two tasks live here, beside enqueue(), so this module imports nothing of the alert rules; alerts/tasks.py
re-exports them for autodiscovery. TRICKY: they keep the names "alerts.tasks.*" they were registered under
when they lived there: the beat schedule and the messages already queued in Redis name them so.
"""
import email.utils
import json
import random
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import urllib3
from celery import shared_task
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import F, Q
from django.utils import timezone as dj_timezone

from alerts import http, payloads
from alerts.models import Delivery, Webhook
from alerts.validation import checked_target

RETRY_AFTER_CAP_S = 300.0
BACKOFF_CAP_S = 300.0
USER_AGENT = "latency_obs-webhooks/1"
# a claim outlives the POST's timeout by this much (DNS check, rendering, the database writes), so it never
# runs out under a live sender; when the sender dies instead, the delivery is tried again once it has
LEASE_MARGIN_S = 60
SWEEP_LIMIT = 50     # deliveries per sweep; the rest wait for the next one
SWEEP_SECONDS = 30   # and no new try after this long, so one slow receiver cannot hold the worker
# a task's try stops before its claim runs out, so no second sender starts while this one still posts
TRY_LIMIT_S = settings.WEBHOOK_TIMEOUT_SECONDS + LEASE_MARGIN_S // 2


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


def lease_seconds() -> float:
    """How long a claim lasts: longer than one try can take."""
    return settings.WEBHOOK_TIMEOUT_SECONDS + LEASE_MARGIN_S


def _unclaimed(now: datetime) -> Q:
    return Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)


def claim(delivery_id: int) -> bool:
    """True when this caller won the next try of a pending delivery that is due and has tries left: the row is
    leased to it for lease_seconds() and the try counted in `attempts`. False for every other contender."""
    now = dj_timezone.now()
    # TRICKY: one conditional UPDATE, not select_for_update(skip_locked=True). SQLite (embedded mode) ignores
    # row locks but serialises writes, so the WHERE is checked and the row changed under its write lock.
    # PostgreSQL locks the row, and an UPDATE that waited for it re-checks the WHERE against the committed row
    # (READ COMMITTED) and matches nothing. A row lock would also hold a transaction open across the POST;
    # the lease needs none, and when a sender dies mid-try its lease just runs out and the sweeper retries.
    # Counting the try here bounds the tries even when senders die: see give_up_abandoned().
    won = Delivery.objects.filter(
        _unclaimed(now), id=delivery_id, status=Delivery.PENDING, next_attempt_at__lte=now,
        attempts__lt=settings.WEBHOOK_MAX_ATTEMPTS,
    ).update(claimed_until=now + timedelta(seconds=lease_seconds()), attempts=F("attempts") + 1)
    return won == 1


def _request(webhook: Webhook, delivery: Delivery) -> tuple[bytes, dict]:
    if webhook.kind == Webhook.SLACK:
        body = json.dumps(payloads.slack_message(delivery.payload), sort_keys=True).encode()
        headers = {"Content-Type": "application/json"}
    else:
        body = payloads.json_body(delivery.event, delivery.payload, str(delivery.uuid))
        headers = payloads.json_headers(webhook.secret, delivery.event, body, int(time.time()))
    # the same id on every try, so receivers can drop a repeat (Slack ignores headers it does not know)
    return body, {**headers, "X-LatencyObs-Delivery": str(delivery.uuid), "User-Agent": USER_AGENT}


def _finish(delivery: Delivery, status: str, code: int | None, error: str, delay: float | None = None) -> None:
    """Record a try's outcome and release the claim; a pending delivery is due again after `delay` seconds."""
    now = dj_timezone.now()
    delivery.status, delivery.last_status_code, delivery.last_error = status, code, error[:2000]
    delivery.claimed_until = None
    if status == Delivery.SENT:
        delivery.sent_at = now
    if delay is not None:
        delivery.next_attempt_at = now + timedelta(seconds=delay)
    delivery.save(update_fields=["status", "last_status_code", "last_error", "claimed_until", "sent_at",
                                 "next_attempt_at"])


def _try(delivery: Delivery) -> float | None:
    """One try of a delivery this process has claimed. Returns seconds until the next try, or None when the
    delivery is now sent or failed."""
    webhook = delivery.webhook
    if not webhook.enabled:
        return _finish(delivery, Delivery.FAILED, None, "webhook disabled")
    try:
        # again at send time: the host's DNS may now point somewhere private
        url, address = checked_target(webhook.url)
    except ValidationError as exc:
        return _finish(delivery, Delivery.FAILED, None, f"URL refused: {' '.join(exc.messages)}")
    body, headers = _request(webhook, delivery)
    retry_after = None
    try:
        response = http.post(url, address, body, headers, settings.WEBHOOK_TIMEOUT_SECONDS)
    except urllib3.exceptions.HTTPError as exc:
        code, error = None, f"{type(exc).__name__}: {exc}"
    else:
        code, error = response.status, response.text[:500]
        if 200 <= code < 300:
            return _finish(delivery, Delivery.SENT, code, "")
        if code != 429 and code < 500:
            reason = "redirect not followed" if 300 <= code < 400 else "refused by the receiver"
            return _finish(delivery, Delivery.FAILED, code, f"{reason}: {error}")
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
    if delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        return _finish(delivery, Delivery.FAILED, code, f"gave up after {delivery.attempts} attempts: {error}")
    delay = retry_after if retry_after is not None else backoff_delay(delivery.attempts)
    _finish(delivery, Delivery.PENDING, code, error, delay)
    return delay


def deliver(delivery_id: int) -> float | None:
    """Try once if this caller wins the claim. Returns seconds until the next try is due (also stored in
    next_attempt_at), or None: sent, failed, or not this caller's to try (settled, not due, or claimed)."""
    if not claim(delivery_id):
        return None
    return _try(Delivery.objects.select_related("webhook").get(id=delivery_id))


def give_up_abandoned() -> int:
    """Fail the pending deliveries that have used every try while the last one never finished (its sender
    died and its claim ran out); returns how many."""
    now = dj_timezone.now()
    return Delivery.objects.filter(
        _unclaimed(now), status=Delivery.PENDING, attempts__gte=settings.WEBHOOK_MAX_ATTEMPTS,
    ).update(status=Delivery.FAILED, claimed_until=None,
             last_error="gave up: WEBHOOK_MAX_ATTEMPTS tries started and the last one did not finish")


def send_due(limit: int = SWEEP_LIMIT) -> dict:
    """The sweeper: one try of each pending, due, unclaimed delivery, oldest due first, at most `limit` and
    none started after SWEEP_SECONDS. Returns counts {"tried", "sent", "failed", "pending", "given_up"}."""
    given_up = give_up_abandoned()
    now = dj_timezone.now()
    due = list(Delivery.objects.filter(
        _unclaimed(now), status=Delivery.PENDING, next_attempt_at__lte=now,
        attempts__lt=settings.WEBHOOK_MAX_ATTEMPTS,
    ).order_by("next_attempt_at", "id").values_list("id", flat=True)[:limit])
    deadline, tried = time.monotonic() + SWEEP_SECONDS, []
    for delivery_id in due:
        if time.monotonic() > deadline:
            break
        if claim(delivery_id):  # another sender may have taken it since the query
            _try(Delivery.objects.select_related("webhook").get(id=delivery_id))
            tried.append(delivery_id)
    outcome = Counter(Delivery.objects.filter(id__in=tried).values_list("status", flat=True))
    return {"tried": len(tried), "sent": outcome[Delivery.SENT], "failed": outcome[Delivery.FAILED],
            "pending": outcome[Delivery.PENDING], "given_up": given_up}


@shared_task(name="alerts.tasks.send_delivery", acks_late=True, soft_time_limit=TRY_LIMIT_S)
def send_delivery(delivery_id: int) -> dict:
    """The first try, queued when the delivery's transaction commits. No Celery retries: a failed try sets the
    row's next_attempt_at and the sweeper sends it then; a no-op when the sweeper claimed it first."""
    retry_in_s = deliver(delivery_id)
    status = Delivery.objects.values_list("status", flat=True).get(id=delivery_id)
    return {"id": delivery_id, "status": status, "retry_in_s": retry_in_s}


@shared_task(name="alerts.tasks.send_due_deliveries", acks_late=True, soft_time_limit=SWEEP_SECONDS + TRY_LIMIT_S)
def send_due_deliveries() -> dict:
    """Every 15 s (beat: latency_obs/celery.py): the outbox's due deliveries, whichever process created them."""
    return send_due()


def enqueue(webhook: Webhook, event: str, payload: dict) -> Delivery:
    """Store the delivery (due now) and queue its immediate try for when the caller's transaction commits.
    Where no worker takes that message, the sweeper sends the row."""
    delivery = Delivery.objects.create(webhook=webhook, event=event, payload=payload)
    send_delivery.delay_on_commit(delivery.id)
    return delivery


def send_test(webhook: Webhook, url: str = "") -> Delivery:
    """The 'send test notification' button."""
    return enqueue(webhook, "test", {
        "title": f"Test notification from latency_obs ({webhook.project.name})",
        "verdict": "test", "numbers": {"webhook": webhook.name}, "url": url,
        "context": "If you can read this, the webhook works.",
    })
