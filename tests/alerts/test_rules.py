"""Alert rules end to end: factory traffic in chDB, the state machine, and webhooks POSTed (eager Celery) to a
real loopback receiver: pending then firing, no duplicates, re-notify, one resolution, groups, retries."""
import json
import time
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings

from alerts import rules
from alerts.delivery import send_due
from alerts.models import AlertRule, AlertState, Delivery
from alerts.tasks import evaluate_alert_rules
from analysis.fairness import Deadline
from analysis.models import WindowDiagnosis
from analysis.rollups.materialize import materialize
from budgets.evaluation import evaluate_recent
from budgets.models import Budget, BudgetViolation
from tests import factories as f
from tests.helpers import Ticks

SVC = "llm-gateway"
W1 = (f.BASE, f.BASE + timedelta(minutes=15))
W2 = (W1[1], W1[1] + timedelta(minutes=15))
T0 = W1[1]
SLOW, FAST = 3000, 900  # t_stream: total = 20 + 300 + stream + 15 -> 3335 / 1235 ms


pytestmark = pytest.mark.usefixtures("eager")  # enqueue()d deliveries' first tries run in this thread


@pytest.fixture
def send(ingest):
    def go(project, key, *requests):
        ingest(key, *requests)
        materialize(project.pk, W1[0], W2[1])
    return go


def _traffic(n, stream, window=W1, tenant="alice", **kw):
    """n attempts queued one second apart from the window's start."""
    start = int(window[0].timestamp()) * 1_000_000_000
    return f.request(*[f.attempt(t_stream_ms=stream, tenant=tenant, start_ns=start + i * 1000 * f.MS, **kw)
                       for i in range(n)])


def _rule(project, hooks, **kw):
    fields = {"name": "p95 total", "kind": AlertRule.PERCENTILE, "service": SVC, "bucket": "total", "percentile": 95,
              "threshold": 2000, "min_requests": 5, "for_seconds": 120, "renotify_seconds": 600, **kw}
    rule = AlertRule.objects.create(project=project, **fields)
    rule.webhooks.set(hooks)
    return rule


def _bodies(receiver):
    return [json.loads(r["body"]) for r in receiver.requests]


@pytest.fixture
def ev(django_capture_on_commit_callbacks):
    """ev(rule, window, now): one evaluation, its on-commit sends run (as after a real commit)."""
    def go(rule, window, now):
        with django_capture_on_commit_callbacks(execute=True):
            return rules.evaluate_rule(rule, *window, now)
    return go


@override_settings(PUBLIC_BASE_URL="https://lo.example.com/")
def test_pending_firing_renotify_and_one_resolution(alpha, json_hook, receiver, send, ev):
    project, key = alpha
    send(project, key, _traffic(10, SLOW))
    rule = _rule(project, [json_hook])
    assert ev(rule, W1, T0) == {"": "pending"} and receiver.requests == []
    assert ev(rule, W1, T0 + timedelta(seconds=119)) == {"": "pending"} and receiver.requests == []

    assert ev(rule, W1, T0 + timedelta(seconds=120)) == {"": "firing"}
    assert _bodies(receiver) == [{"event": "alert.firing", "id": str(Delivery.objects.get().uuid), "data": {
        "title": "[FIRING] p95 total llm-gateway",
        "verdict": "",
        "numbers": {"value": 3335.0, "threshold": 2000.0, "requests": 10}, "unit": "ms",
        "url": "https://lo.example.com/diagnosis/?project=alpha&service=llm-gateway"
               "&start=2026-01-05T10:00:00Z&end=2026-01-05T10:15:00Z",
        "context": "Percentile above a threshold: p95 total (ms) over 2026-01-05T10:00:00Z – 2026-01-05T10:15:00Z",
    }}]
    state = AlertState.objects.get(rule=rule)
    assert (state.group_key, state.since, state.last_notified_at, state.last_value) == (
        "", T0 + timedelta(seconds=120), T0 + timedelta(seconds=120), 3335.0)

    # the same and later evaluations within the re-notify interval send nothing
    for seconds in (120, 121, 600, 719):
        assert ev(rule, W1, T0 + timedelta(seconds=seconds)) == {"": "firing"}
    assert len(receiver.requests) == 1
    # 600 s after the last notification: one reminder, then quiet again
    ev(rule, W1, T0 + timedelta(seconds=720))
    ev(rule, W1, T0 + timedelta(seconds=720))
    ev(rule, W1, T0 + timedelta(seconds=721))
    assert [b["event"] for b in _bodies(receiver)] == ["alert.firing", "alert.firing"]

    # back under the threshold in the next window: exactly one resolution
    send(project, key, _traffic(10, FAST, window=W2))
    later = W2[1] + timedelta(seconds=5)
    assert ev(rule, W2, later) == {"": "ok"}
    assert ev(rule, W2, later) == {"": "ok"}
    assert ev(rule, W2, later + timedelta(hours=1)) == {"": "ok"}
    bodies = _bodies(receiver)
    assert [b["event"] for b in bodies] == ["alert.firing", "alert.firing", "alert.resolved"]
    assert bodies[2]["data"]["title"] == "[RESOLVED] p95 total llm-gateway"
    assert bodies[2]["data"]["numbers"] == {"value": 1235.0, "threshold": 2000.0, "requests": 10}
    assert list(Delivery.objects.order_by("id").values_list("event", "status", "attempts")) == [
        ("alert.firing", "sent", 1), ("alert.firing", "sent", 1), ("alert.resolved", "sent", 1)]


def test_pending_that_recovers_goes_back_to_ok_silently(alpha, json_hook, receiver, send, ev):
    project, key = alpha
    send(project, key, _traffic(10, SLOW), _traffic(10, FAST, window=W2))
    rule = _rule(project, [json_hook])
    assert ev(rule, W1, T0) == {"": "pending"}
    assert ev(rule, W2, W2[1]) == {"": "ok"}
    assert ev(rule, W1, W2[1] + timedelta(seconds=60)) == {"": "pending"}  # the pending clock restarted
    assert receiver.requests == []


def test_group_by_tenant_fires_for_the_bad_tenant_only(alpha, json_hook, receiver, send, ev):
    project, key = alpha
    send(project, key, _traffic(8, SLOW, tenant="bad <b>&"), _traffic(8, FAST, tenant="good"))
    rule = _rule(project, [json_hook], group_by="tenant", for_seconds=0)
    assert ev(rule, W1, T0) == {"bad <b>&": "firing", "good": "ok"}
    assert ev(rule, W1, T0) == {"bad <b>&": "firing", "good": "ok"}
    [body] = _bodies(receiver)
    assert body["data"]["title"] == "[FIRING] p95 total llm-gateway tenant=bad <b>&"
    assert body["data"]["numbers"] == {"value": 3335.0, "threshold": 2000.0, "requests": 8}
    assert body["data"]["url"] == ("http://127.0.0.1:8000/diagnosis/?project=alpha&service=llm-gateway"
                                   "&tenant=bad+%3Cb%3E%26&start=2026-01-05T10:00:00Z&end=2026-01-05T10:15:00Z")


def test_percentile_90_of_one_bucket_per_route(alpha, json_hook, receiver, send, ev):
    project, key = alpha
    # t_queue of 10 attempts on /slow: 10, 20, ..., 100 -> p90 = 91 (exact, linear); /fast all 10
    send(project, key, f.request(*[f.attempt(t_queue_ms=10 * (i + 1), route="/slow",
                                             start_ns=f.BASE_NS + i * 1000 * f.MS) for i in range(10)]),
         _traffic(10, FAST, route="/fast"))
    rule = _rule(project, [json_hook], group_by="route", bucket="t_queue", percentile=90, threshold=90, for_seconds=0)
    assert ev(rule, W1, T0) == {"/slow": "firing", "/fast": "ok"}
    assert AlertState.objects.get(rule=rule, group_key="/slow").last_value == pytest.approx(91)
    rule.threshold = 91
    rule.save()
    assert ev(rule, W1, T0 + timedelta(minutes=1)) == {"/slow": "ok", "/fast": "ok"}
    assert [b["event"] for b in _bodies(receiver)] == ["alert.firing", "alert.resolved"]


def test_groups_under_min_requests_are_skipped(alpha, json_hook, receiver, send, ev):
    project, key = alpha
    send(project, key, _traffic(4, SLOW))
    rule = _rule(project, [json_hook], for_seconds=0)
    assert ev(rule, W1, T0) == {}
    assert not AlertState.objects.filter(rule=rule).exists() and receiver.requests == []
    rule.min_requests = 4
    rule.save()
    assert ev(rule, W1, T0) == {"": "firing"} and len(receiver.requests) == 1


def test_verdict_rule_reads_the_stored_diagnosis(alpha, slack_hook, receiver, ev):
    project, _ = alpha
    WindowDiagnosis.objects.create(project=project, service=SVC, start=W1[0], end=W1[1], verdict="queue_backlog",
                                   result={"verdict": "queue_backlog", "evidence": {"requests": 42}})
    rule = _rule(project, [slack_hook], kind=AlertRule.VERDICT, name="not healthy", for_seconds=0, min_requests=20)
    assert ev(rule, W1, T0) == {"": "firing"}
    [msg] = _bodies(receiver)
    assert msg["blocks"][0]["text"]["text"] == "[FIRING] not healthy llm-gateway"
    assert msg["blocks"][1]["text"]["text"] == "*Verdict:* `queue_backlog`"
    assert sorted(x["text"] for x in msg["blocks"][1]["fields"]) == ["*requests*\n42", "*value*\nqueue_backlog"]
    # a healthy diagnosis of the next window resolves it; one with too few requests would not count
    WindowDiagnosis.objects.create(project=project, service=SVC, start=W2[0], end=W2[1], verdict="healthy",
                                   result={"verdict": "healthy", "evidence": {"requests": 50}})
    assert ev(rule, W2, W2[1]) == {"": "ok"}
    assert ev(rule, W2, W2[1]) == {"": "ok"}
    assert [m["blocks"][0]["text"]["text"] for m in _bodies(receiver)] == [
        "[FIRING] not healthy llm-gateway", "[RESOLVED] not healthy llm-gateway"]


def test_retry_rate_and_tenant_tail(alpha, json_hook, receiver, send, ev):
    project, key = alpha
    spans = []
    for i in range(6):  # 6 runs, the first 3 retried once: 0.5 extra attempts per run
        run = {"llm.run.id": f"run-{i}"}
        at = f.BASE_NS + i * 10_000 * f.MS
        if i < 3:
            spans.append(f.attempt(attributes={**run, "llm.attempt": 1, "llm.retry.cause": "timeout"}, start_ns=at,
                                   status_code=f.Status.STATUS_CODE_ERROR, tenant="slow"))
        spans.append(f.attempt(attributes={**run, "llm.attempt": 2 if i < 3 else 1}, start_ns=at + 2000 * f.MS,
                               t_stream_ms=SLOW if i < 3 else FAST, tenant="slow" if i < 3 else "quick"))
    send(project, key, f.request(*spans))
    retry = _rule(project, [json_hook], kind=AlertRule.RETRY_RATE, name="retries", threshold=0.4, for_seconds=0)
    assert rules.measure(retry, *W1) == {"": (0.5, 6)}
    assert ev(retry, W1, T0) == {"": "firing"}
    tail = _rule(project, [json_hook], kind=AlertRule.TENANT_TAIL, name="tail", threshold=2000, min_requests=3,
                 for_seconds=0, group_by="tenant")
    assert ev(tail, W1, T0) == {"slow": "firing", "quick": "ok"}
    assert [b["data"]["title"] for b in _bodies(receiver)] == ["[FIRING] retries llm-gateway",
                                                                "[FIRING] tail llm-gateway tenant=slow"]


def test_gap_fraction_rule_over_the_service_queue(alpha, json_hook, receiver, send, ev):
    project, key = alpha

    def one(start_ms, t_queue, stream, cap):
        return f.attempt(t_queue_ms=t_queue, t_first_token_ms=300, t_stream_ms=stream, t_post_ms=100,
                         start_ns=f.BASE_NS + start_ms * f.MS, attributes={"llm.scheduler.cap": cap})
    # tests/analysis/test_queries.py's scheduler: gw-1 (cap 1): A in flight 0-2 s, B queued 1-2 s behind it (at
    # cap), C queued 3-4 s with nothing in flight; gw-2 (cap 2): D queued 0-2 s with nothing in flight
    # -> 3 of 4 backlog seconds under cap: gap_fraction 0.75
    send(project, key, f.request(one(0, 0, 1600, 1), one(1000, 1000, 600, 1), one(3000, 1000, 600, 1),
                                 instance="gw-1"), f.request(one(0, 2000, 600, 2), instance="gw-2"))
    rule = _rule(project, [json_hook], kind=AlertRule.GAP_FRACTION, name="gap", threshold=0.5, min_requests=4,
                 for_seconds=0)
    assert rules.measure(rule, *W1) == {"": (0.75, 4)}
    assert ev(rule, W1, T0) == {"": "firing"}
    assert _bodies(receiver)[0]["data"]["numbers"] == {"value": 0.75, "threshold": 0.5, "requests": 4}


def test_rule_validation(alpha):
    project, _ = alpha
    with pytest.raises(ValidationError) as e:
        AlertRule(project=project, name="x", kind=AlertRule.VERDICT, service=SVC, group_by="tenant").full_clean()
    assert e.value.message_dict == {"group_by": ["verdict is measured per service"]}
    with pytest.raises(ValidationError) as e:
        AlertRule(project=project, name="x", kind=AlertRule.TENANT_TAIL, service=SVC, bucket="t_queue").full_clean()
    assert e.value.message_dict == {"bucket": ["a tenant's tail is its ttft or total"]}
    other = Budget.objects.create(project=project, service="other", total_ms=1)
    with pytest.raises(ValidationError) as e:
        AlertRule(project=project, name="x", kind=AlertRule.BUDGET_VIOLATION, service=SVC, budget=other).full_clean()
    assert e.value.message_dict == {"budget": ["a budget of this rule's project and service"]}
    AlertRule(project=project, name="x", kind=AlertRule.PERCENTILE, service=SVC, group_by="tenant").full_clean()


def test_budget_violation_rule_reads_the_violations_stored_for_its_window(alpha, json_hook, receiver, send, ev):
    project, key = alpha
    send(project, key, _traffic(20, SLOW), _traffic(20, FAST, window=W2))
    budget = Budget.objects.create(project=project, service=SVC, route="", total_ms=2500)
    rule = _rule(project, [json_hook], kind=AlertRule.BUDGET_VIOLATION, name="budget", budget=budget, for_seconds=0,
                 min_requests=21)
    # before the budgets step has evaluated the window nothing is known: no group is judged, none is created
    assert ev(rule, W1, T0) == {} and not AlertState.objects.exists()
    assert not BudgetViolation.objects.exists()  # the rule evaluates no budget itself
    evaluate_recent(T0)  # the budgets step of the minute ending at T0: W1, total 3335 > 2500
    assert list(BudgetViolation.objects.values_list("stage", "over_ms", "requests")) == [("total", 835.0, 20)]
    assert ev(rule, W1, T0) == {"": "ok"}  # a violation on 20 requests, fewer than the rule's 21
    rule.min_requests = 20
    rule.save()
    assert ev(rule, W1, T0) == {"": "firing"}
    [body] = _bodies(receiver)
    assert body["data"]["numbers"] == {"value": 835.0}
    assert body["data"]["context"].startswith("Budget violation: largest overspend (ms) over ")

    # the next window (total 1235): firing until the budgets step has evaluated it, then one resolution
    assert ev(rule, W2, W2[1]) == {} and AlertState.objects.get(rule=rule).state == "firing"
    evaluate_recent(W2[1])
    assert ev(rule, W2, W2[1]) == {"": "ok"}
    assert [b["event"] for b in _bodies(receiver)] == ["alert.firing", "alert.resolved"]
    assert BudgetViolation.objects.count() == 1  # W1's; W2 is within budget


@override_settings(WEBHOOK_BACKOFF_BASE_MS=10)
def test_503_then_200_ends_with_one_delivered_message(alpha, json_hook, receiver, send, ev):
    project, key = alpha
    send(project, key, _traffic(10, SLOW))
    receiver.answer(503)
    rule = _rule(project, [json_hook], for_seconds=0)
    assert ev(rule, W1, T0) == {"": "firing"}
    [d] = Delivery.objects.all()
    assert (d.status, d.attempts, d.last_status_code) == ("pending", 1, 503)  # the immediate try
    time.sleep(0.02)  # the retry is due after the backoff (at most 10 ms)
    assert send_due()["sent"] == 1  # the outbox sweeper's try
    d.refresh_from_db()
    assert (d.event, d.status, d.attempts, d.last_status_code) == ("alert.firing", "sent", 2, 200)
    assert len(receiver.requests) == 2 and receiver.requests[0]["body"] == receiver.requests[1]["body"]
    ev(rule, W1, T0)
    assert Delivery.objects.count() == 1 and len(receiver.requests) == 2


def test_evaluate_all_covers_enabled_rules_over_the_recent_window(alpha, json_hook, receiver, send,
                                                                 django_capture_on_commit_callbacks):
    project, key = alpha
    send(project, key, _traffic(10, SLOW))
    _rule(project, [json_hook], for_seconds=0)
    _rule(project, [json_hook], for_seconds=0, name="off", enabled=False)
    with django_capture_on_commit_callbacks(execute=True):
        assert rules.evaluate_all(T0 + timedelta(seconds=30)) == {"rules": 1, "firing": 1, "deferred": 0, "errors": 0}
    assert [b["data"]["title"] for b in _bodies(receiver)] == ["[FIRING] p95 total llm-gateway"]
    # the task takes its `now` as ISO 8601 (the pipeline's), else the clock: no traffic there, nothing changes
    assert evaluate_alert_rules.apply(args=[(T0 + timedelta(seconds=40)).isoformat()]).get()["firing"] == 1
    assert evaluate_alert_rules.apply().get() == {"rules": 1, "firing": 0, "deferred": 0, "errors": 0}
    assert len(receiver.requests) == 1


def test_projects_take_turns_and_the_rules_left_for_lack_of_time_go_first(alpha, beta, clickhouse):
    for project, name in ((alpha[0], "a1"), (alpha[0], "a2"), (beta[0], "b1")):
        _rule(project, [], name=name)

    def minute(m):
        """Room for two rules (fake clock, a second each); returns (deferred, the rules evaluated)."""
        now = T0 + timedelta(minutes=m, seconds=30)
        out = rules.evaluate_all(now, Deadline(6, clock=Ticks()))
        return out["deferred"], {r.name for r in AlertRule.objects.filter(last_evaluated_at=now)}

    assert minute(0) == (1, {"a1", "b1"})  # one of each project, not alpha's two
    assert minute(1) == (1, {"a2", "b1"})  # alpha's one left first; beta's only one every minute
    assert minute(2) == (1, {"a1", "b1"})
