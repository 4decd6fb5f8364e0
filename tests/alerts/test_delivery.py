"""Deliveries to a real HTTP server on loopback: signatures, delivery ids, retries, permanent failures, redirects.
(Claims and the sweeper: test_outbox.py.)"""
import hashlib
import hmac
import json
import socket
import time
import uuid

from django.test import override_settings
from django.utils import timezone

from alerts.delivery import deliver, enqueue, send_test
from alerts.models import Delivery, Webhook
from alerts.tasks import send_delivery

SUMMARY = {"title": "p95 total above budget", "verdict": "queue_backlog", "numbers": {"p95 total": "3.1 s"},
           "url": "https://lo.example.com/d/1", "context": "tenant <b>&"}


def _run(delivery: Delivery, max_wait: float = 1.5) -> Delivery:
    """deliver() until settled, sleeping until each next try is due (tests keep the delays short)."""
    waited = 0.0
    while True:
        delivery.refresh_from_db()
        if delivery.status != "pending":
            return delivery
        delay = max((delivery.next_attempt_at - timezone.now()).total_seconds(), 0.0)
        assert waited + delay <= max_wait, f"would wait {delay}s"
        time.sleep(delay)
        waited += delay
        deliver(delivery.id)


def _new(hook, event="alert.firing", payload=None) -> Delivery:
    return Delivery.objects.create(webhook=hook, event=event, payload=payload or SUMMARY)


def test_json_webhook_is_signed_and_the_signature_verifies(json_hook, receiver):
    assert len(json_hook.secret) >= 40  # generated
    d = _run(_new(json_hook))
    assert (d.status, d.attempts, d.last_status_code) == ("sent", 1, 200) and d.sent_at
    [req] = receiver.requests
    h = req["headers"]
    assert h["Content-Type"] == "application/json" and h["X-LatencyObs-Event"] == "alert.firing"
    expected = hmac.new(json_hook.secret.encode(), f"{h['X-LatencyObs-Timestamp']}.".encode() + req["body"],
                        hashlib.sha256).hexdigest()
    assert hmac.compare_digest(h["X-LatencyObs-Signature"], "sha256=" + expected)
    assert abs(int(h["X-LatencyObs-Timestamp"]) - time.time()) < 60
    # the delivery id is in the signed body and in a header
    assert json.loads(req["body"]) == {"event": "alert.firing", "id": str(d.uuid), "data": SUMMARY}
    assert h["X-LatencyObs-Delivery"] == str(d.uuid) and uuid.UUID(h["X-LatencyObs-Delivery"]).version == 4


def test_slack_webhook_receives_block_kit(slack_hook, receiver):
    assert _run(_new(slack_hook)).status == "sent"
    [req] = receiver.requests
    assert req["path"] == "/slack" and "X-LatencyObs-Signature" not in req["headers"]
    assert req["headers"]["X-LatencyObs-Delivery"] == str(Delivery.objects.get().uuid)
    msg = json.loads(req["body"])
    assert [b["type"] for b in msg["blocks"]] == ["header", "section", "actions", "context"]
    assert msg["blocks"][2]["elements"][0]["url"] == "https://lo.example.com/d/1"
    assert msg["blocks"][3]["elements"][0]["text"] == "tenant &lt;b&gt;&amp;"


def test_503_then_200_keeps_the_delivery_id_and_body_across_tries(json_hook, receiver):
    receiver.answer(503)
    d = _run(_new(json_hook))
    assert (d.status, d.attempts, d.last_status_code) == ("sent", 2, 200)
    first, second = receiver.requests
    assert first["headers"]["X-LatencyObs-Delivery"] == second["headers"]["X-LatencyObs-Delivery"] == str(d.uuid)
    assert first["body"] == second["body"]


@override_settings(WEBHOOK_BACKOFF_BASE_MS=10)
def test_the_task_makes_one_try_and_leaves_the_retry_to_the_row(json_hook, receiver):
    receiver.answer(503)
    d = _new(json_hook)
    result = send_delivery.apply(args=[d.id]).get()  # wiring: JSON argument in, a small summary out
    d.refresh_from_db()
    assert result == {"id": d.id, "status": "pending", "retry_in_s": result["retry_in_s"]}
    # backoff of the first retry: the 10 ms base, jittered into [5, 10] ms
    assert 0.005 <= result["retry_in_s"] <= 0.010 and d.next_attempt_at > d.created_at
    assert (d.attempts, d.last_status_code, d.claimed_until) == (1, 503, None) and len(receiver.requests) == 1


def test_429_honours_retry_after(json_hook, receiver):
    receiver.answer((429, {"Retry-After": "1"}))
    d = _new(json_hook)
    assert deliver(d.id) == 1.0
    d.refresh_from_db()
    assert (d.status, d.attempts, d.last_status_code) == ("pending", 1, 429)
    # due 1 s after the try, not before: an early call does nothing
    assert 0.9 <= (d.next_attempt_at - timezone.now()).total_seconds() <= 1.0
    assert deliver(d.id) is None and len(receiver.requests) == 1
    assert _run(d).status == "sent" and len(receiver.requests) == 2


def test_400_fails_without_retry(json_hook, receiver):
    receiver.answer(400)
    d = _run(_new(json_hook))
    assert (d.status, d.attempts, d.last_status_code) == ("failed", 1, 400)
    assert "refused by the receiver" in d.last_error and len(receiver.requests) == 1
    assert deliver(d.id) is None and len(receiver.requests) == 1  # a settled delivery is not sent again


@override_settings(WEBHOOK_MAX_ATTEMPTS=3)
def test_max_attempts_respected(json_hook, receiver):
    receiver.answer(500, 502, 503, 504)
    d = _run(_new(json_hook))
    assert (d.status, d.attempts, d.last_status_code) == ("failed", 3, 503)
    assert "gave up after 3 attempts" in d.last_error and len(receiver.requests) == 3


def test_redirects_are_not_followed(json_hook, receiver):
    receiver.answer((302, {"Location": receiver.url("/elsewhere")}))
    d = _run(_new(json_hook))
    assert (d.status, d.last_status_code) == ("failed", 302) and "redirect not followed" in d.last_error
    assert [r["path"] for r in receiver.requests] == ["/hook"]


@override_settings(WEBHOOK_TIMEOUT_SECONDS=0.2, WEBHOOK_MAX_ATTEMPTS=2)
def test_timeout_is_retryable(json_hook, receiver):
    receiver.answer((200, {}, 0.5))
    d = _run(_new(json_hook))
    assert (d.status, d.attempts, d.last_status_code) == ("sent", 2, 200)


@override_settings(WEBHOOK_MAX_ATTEMPTS=2)
def test_connection_refused_is_retried_then_fails(alpha):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    hook = Webhook.objects.create(project=alpha[0], name="gone", kind="json", url=f"http://127.0.0.1:{port}/")
    d = _run(_new(hook))
    assert (d.status, d.attempts, d.last_status_code) == ("failed", 2, None)
    assert "ConnectionError" in d.last_error


def test_url_is_checked_again_at_send_time(json_hook, receiver):
    d = _new(json_hook)
    with override_settings(WEBHOOK_ALLOW_LOOPBACK=False):
        d = _run(d)
    assert d.status == "failed" and "URL refused" in d.last_error and receiver.requests == []


def test_disabled_webhook_is_not_called(json_hook, receiver):
    json_hook.enabled = False
    json_hook.save()
    d = _run(_new(json_hook))
    assert d.status == "failed" and d.last_error == "webhook disabled" and receiver.requests == []


def test_enqueue_schedules_the_task_after_commit(json_hook, receiver, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        d = enqueue(json_hook, "weekly_review", {"title": "week 2026-W02"})
    assert len(callbacks) == 1 and receiver.requests == []
    assert (d.status, d.attempts, d.event) == ("pending", 0, "weekly_review")
    send_delivery.apply(args=[d.id])
    d.refresh_from_db()
    assert d.status == "sent" and json.loads(receiver.requests[0]["body"])["event"] == "weekly_review"


def test_send_test_notification(slack_hook, receiver, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        d = send_test(slack_hook, url="https://lo.example.com/")
    send_delivery.apply(args=[d.id])
    msg = json.loads(receiver.requests[0]["body"])
    assert "Test notification" in msg["blocks"][0]["text"]["text"]
