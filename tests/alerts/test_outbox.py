"""The outbox (alerts/delivery.py): the sweeper sends due deliveries once each, retries when due, honours claims
(a crashed sender's claim runs out; two contenders make one POST per try) and gives up after the last try."""
import threading
from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from alerts.delivery import claim, deliver, lease_seconds, send_due
from alerts.models import Delivery
from alerts.tasks import send_delivery, send_due_deliveries
from latency_obs.celery import app

SUMMARY = {"title": "p95 total above budget", "verdict": "queue_backlog"}
NOTHING = {"tried": 0, "sent": 0, "failed": 0, "pending": 0, "given_up": 0}


def _new(hook, **fields) -> Delivery:
    return Delivery.objects.create(webhook=hook, event="alert.firing", payload=SUMMARY, **fields)


def _ids(receiver) -> list[str]:
    return [r["headers"]["X-LatencyObs-Delivery"] for r in receiver.requests]


def _at(when):
    """The clock (django.utils.timezone.now) stopped at `when`."""
    return mock.patch("django.utils.timezone.now", return_value=when)


def test_sweeper_sends_due_deliveries_and_skips_later_ones(json_hook, receiver):
    due = _new(json_hook)
    later = _new(json_hook, next_attempt_at=timezone.now() + timedelta(minutes=1))
    assert send_due() == {**NOTHING, "tried": 1, "sent": 1}
    assert _ids(receiver) == [str(due.uuid)]
    later.refresh_from_db()
    assert (later.status, later.attempts) == ("pending", 0)
    assert send_due() == NOTHING and len(receiver.requests) == 1  # a sent delivery is not sent again


def test_sweeper_takes_the_oldest_due_first_and_at_most_its_limit(json_hook, receiver):
    now = timezone.now()
    newest, oldest, middle = (_new(json_hook, next_attempt_at=now - timedelta(seconds=s)) for s in (1, 30, 10))
    assert send_due(limit=2)["sent"] == 2
    assert _ids(receiver) == [str(oldest.uuid), str(middle.uuid)]
    assert send_due(limit=2)["sent"] == 1 and _ids(receiver)[2] == str(newest.uuid)


def test_retry_after_sets_the_next_try_and_the_sweeper_waits_for_it(json_hook, receiver):
    receiver.answer((429, {"Retry-After": "120"}))
    d = _new(json_hook)
    assert send_due() == {**NOTHING, "tried": 1, "pending": 1}
    d.refresh_from_db()
    wait = d.next_attempt_at - timezone.now()
    assert timedelta(seconds=119) < wait <= timedelta(seconds=120)
    assert (d.attempts, d.last_status_code, d.claimed_until) == (1, 429, None)
    with _at(d.next_attempt_at - timedelta(seconds=1)):
        assert send_due() == NOTHING
    with _at(d.next_attempt_at):
        assert send_due()["sent"] == 1
    d.refresh_from_db()
    assert (d.status, d.attempts) == ("sent", 2)
    assert _ids(receiver) == [str(d.uuid)] * 2  # the same id on both tries: receivers can drop a repeat


@override_settings(WEBHOOK_BACKOFF_BASE_MS=60_000)
def test_backoff_sets_the_next_try_after_a_503(json_hook, receiver):
    receiver.answer(503, 503)
    d = _new(json_hook)
    tried_at = timezone.now()
    send_due()
    d.refresh_from_db()
    # first retry: 60 s base, jittered into [30, 60] s
    assert timedelta(seconds=30) <= d.next_attempt_at - tried_at <= timedelta(seconds=61)
    with _at(tried_at + timedelta(seconds=29)):
        assert send_due() == NOTHING
    with _at(tried_at + timedelta(seconds=62)):
        assert send_due()["pending"] == 1
    d.refresh_from_db()
    # second retry: the base doubled, 120 s, jittered into [60, 120] s after the second try (at +62 s)
    assert timedelta(seconds=62 + 60) <= d.next_attempt_at - tried_at <= timedelta(seconds=62 + 120)
    assert (d.attempts, len(receiver.requests)) == (2, 2)


@override_settings(WEBHOOK_TIMEOUT_SECONDS=10)
def test_a_claim_is_won_once_and_lasts_longer_than_a_post(json_hook, receiver):
    d = _new(json_hook)
    before = timezone.now()
    assert claim(d.id) is True
    assert claim(d.id) is False  # the second contender
    d.refresh_from_db()
    assert d.attempts == 1 and d.claimed_until >= before + timedelta(seconds=lease_seconds())
    assert lease_seconds() == 10 + 60  # WEBHOOK_TIMEOUT_SECONDS + margin
    assert deliver(d.id) is None and send_due() == NOTHING and receiver.requests == []


def test_a_crashed_senders_claim_runs_out_and_the_delivery_is_retried(json_hook, receiver):
    d = _new(json_hook)
    assert claim(d.id)  # ... and the sender dies before it posts
    d.refresh_from_db()
    with _at(d.claimed_until - timedelta(seconds=1)):
        assert send_due() == NOTHING
    with _at(d.claimed_until + timedelta(seconds=1)):
        assert send_due()["sent"] == 1
    d.refresh_from_db()
    assert (d.status, d.attempts, d.claimed_until) == ("sent", 2, None)  # the lost try counts
    assert len(receiver.requests) == 1


@override_settings(WEBHOOK_MAX_ATTEMPTS=3)
def test_the_sweeper_gives_up_after_max_attempts(json_hook, receiver):
    receiver.answer(500, 502, 503, 504)
    d = _new(json_hook)
    for _ in range(4):
        Delivery.objects.filter(id=d.id).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
        send_due()
    d.refresh_from_db()
    assert (d.status, d.attempts, d.last_status_code) == ("failed", 3, 503)
    assert "gave up after 3 attempts" in d.last_error and len(receiver.requests) == 3


@override_settings(WEBHOOK_MAX_ATTEMPTS=2)
def test_a_last_try_that_never_finished_is_given_up_without_another_post(json_hook, receiver):
    d = _new(json_hook, attempts=1)
    assert claim(d.id)  # the second and last try; its sender dies
    d.refresh_from_db()
    with _at(d.claimed_until - timedelta(seconds=1)):
        assert send_due() == NOTHING  # it may still be posting
    with _at(d.claimed_until + timedelta(seconds=1)):
        assert send_due() == {**NOTHING, "given_up": 1}
    d.refresh_from_db()
    assert (d.status, d.attempts) == ("failed", 2) and "did not finish" in d.last_error
    assert receiver.requests == []


def test_the_sweeper_fails_deliveries_to_disabled_webhooks(json_hook, receiver):
    d = _new(json_hook)
    json_hook.enabled = False
    json_hook.save()
    assert send_due() == {**NOTHING, "tried": 1, "failed": 1}
    d.refresh_from_db()
    assert (d.status, d.last_error) == ("failed", "webhook disabled") and receiver.requests == []


def test_the_immediate_task_does_nothing_after_the_sweeper_sent_it(json_hook, receiver):
    d = _new(json_hook)
    send_due()
    assert send_delivery.apply(args=[d.id]).get() == {"id": d.id, "status": "sent", "retry_in_s": None}
    assert len(receiver.requests) == 1


def test_the_sweeper_task_is_wired_and_scheduled(json_hook, receiver):
    _new(json_hook)
    assert send_due_deliveries.apply().get() == {**NOTHING, "tried": 1, "sent": 1}
    entry = app.conf.beat_schedule["send-due-deliveries"]
    assert entry["task"] == "alerts.tasks.send_due_deliveries"
    assert entry["schedule"] <= 15 and entry["options"]["expires"] <= entry["schedule"]


def _contend(delivery_id: int) -> None:
    """Four senders at once: two immediate tasks and two sweeps, each on its own database connection."""
    start = threading.Barrier(4)

    def run(send):
        try:
            start.wait()
            send()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(f,)) for f in
               (lambda: deliver(delivery_id), lambda: deliver(delivery_id), send_due, send_due)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL; the test "
                    "database of SQLite is one in-memory file shared without locking waits")
@pytest.mark.django_db(transaction=True)
def test_concurrent_senders_post_each_try_once(json_hook, receiver):
    receiver.answer((503, {}, 0.3), (200, {}, 0.3))  # slow answers: every contender starts while one posts
    d = _new(json_hook)
    _contend(d.id)
    d.refresh_from_db()
    assert (d.status, d.attempts, len(receiver.requests)) == ("pending", 1, 1)
    Delivery.objects.filter(id=d.id).update(next_attempt_at=timezone.now())
    _contend(d.id)
    d.refresh_from_db()
    assert (d.status, d.attempts, len(receiver.requests)) == ("sent", 2, 2)
    assert _ids(receiver) == [str(d.uuid)] * 2
