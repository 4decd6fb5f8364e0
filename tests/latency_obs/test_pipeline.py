"""The minute pipeline: materialize -> diagnose -> budgets -> alert rules at one `now`, each step reading what
the steps before it stored; a failing step stops none of the others, and its task fails loudly afterwards."""
import json
from datetime import timedelta

import pytest

from alerts.models import AlertRule, AlertState, Webhook
from analysis.models import JobWatermark, WindowDiagnosis
from analysis.work import backlog, jobs
from budgets import evaluation
from budgets.models import Budget, BudgetViolation
from latency_obs import pipeline
from latency_obs.celery import app
from latency_obs.tasks import run_minute_pipeline
from tests import factories as f

pytestmark = pytest.mark.usefixtures("eager")  # the alerts' deliveries are tried in this thread

SVC = "llm-gateway"
NOW = f.BASE + timedelta(minutes=15, seconds=20)  # the minute ending at 10:15: the recent window 10:00-10:15
WINDOW = (f.BASE, f.BASE + timedelta(minutes=15))
STEPS = ["materialize", "incidents", "diagnose", "budgets", "alert_rules"]


@pytest.fixture
def slow_decode(alpha, ingest, clickhouse):
    """20 attempts queued 1 s apart from 10:00, stored but not yet materialized. Each takes 20 + 300 + 8000 + 15
    = 8335 ms, and 8000 ms of stream for 200 output tokens is 40 ms per token (over 35): decode_throughput."""
    project, key = alpha
    ingest(key, f.request(*[f.attempt(t_stream_ms=8000, start_ns=f.BASE_NS + i * 1000 * f.MS) for i in range(20)]))
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")
    JobWatermark.objects.all().delete()
    return project


@pytest.fixture
def rules(slow_decode, receiver):
    """A budget of 2500 ms total, and two rules that fire at once: its violation, and a verdict not healthy."""
    hook = Webhook.objects.create(project=slow_decode, name="ops", kind=Webhook.JSON, url=receiver.url())
    budget = Budget.objects.create(project=slow_decode, service=SVC, total_ms=2500)
    common = {"project": slow_decode, "service": SVC, "for_seconds": 0, "min_requests": 20}
    over = AlertRule.objects.create(name="over budget", kind=AlertRule.BUDGET_VIOLATION, budget=budget, **common)
    verdict = AlertRule.objects.create(name="not healthy", kind=AlertRule.VERDICT, **common)
    for rule in (over, verdict):
        rule.webhooks.set([hook])
    return over, verdict


@pytest.fixture
def run(django_capture_on_commit_callbacks):
    """run(now): the pipeline, its alerts' on-commit sends run (as after a real commit)."""
    def go(now=NOW):
        with django_capture_on_commit_callbacks(execute=True):
            return pipeline.run(now)
    return go


def _messages(receiver) -> dict:
    return {body["data"]["title"]: body["data"] for body in (json.loads(r["body"]) for r in receiver.requests)}


def _fail(*args, **kwargs):
    raise RuntimeError("store down")


def test_runs_the_five_steps_in_order_at_one_now(slow_decode, rules, receiver, run):
    out = run()
    assert (out["now"], list(out["steps"]), out["failed"]) == (NOW.isoformat(), STEPS, [])
    # 1. materialize: the 20 attempts, its watermark at `now`
    materialized = out["steps"]["materialize"]
    assert (materialized["rows"], materialized["projects"], materialized["deferred"]) == (20, [slow_decode.id], 0)
    # 2. diagnose: the service with new spans, up to what was materialized, over the buckets just materialized
    marks = dict(JobWatermark.objects.values_list("name", "at"))
    assert marks["diagnose"] == marks["materialize"]
    d = WindowDiagnosis.objects.get()
    assert (d.start, d.end, d.verdict, d.result["evidence"]["requests"]) == (*WINDOW, "decode_throughput", 20)
    assert out["steps"]["diagnose"] == {"window": [t.isoformat() for t in WINDOW], "verdicts": {"decode_throughput": 1},
                                        "found": 1, "expired": 0, "deferred": 0, "errors": 0}
    # 3. budgets: the same window, 8335 - 2500 = 5835 ms over
    assert list(BudgetViolation.objects.values_list("start", "end", "stage", "over_ms", "requests")) == [
        (*WINDOW, "total", 5835.0, 20)]
    # 4. alert rules: read that violation and that diagnosis
    assert out["steps"]["alert_rules"] == {"rules": 2, "firing": 2, "deferred": 0, "errors": 0}
    assert set(out["seconds"]) == set(STEPS)
    messages = _messages(receiver)
    assert messages["[FIRING] over budget llm-gateway"]["numbers"] == {"value": 5835.0}
    assert messages["[FIRING] over budget llm-gateway"]["verdict"] == "decode_throughput"
    assert messages["[FIRING] not healthy llm-gateway"]["numbers"] == {"value": "decode_throughput", "requests": 20}

    # the same `now` again: every step replaces its own results, and no message is sent twice; no span came
    # since, so nothing is diagnosed again
    again = run()
    assert (again["failed"], again["steps"]["diagnose"]["verdicts"]) == ([], {})
    assert (WindowDiagnosis.objects.count(), BudgetViolation.objects.count(), len(receiver.requests)) == (1, 1, 2)


def test_a_failing_step_stops_none_of_the_others(rules, receiver, run, monkeypatch, caplog):
    _, verdict = rules
    monkeypatch.setattr(backlog, "queue_new_services", _fail)
    out = run()
    assert (list(out["steps"]), out["failed"]) == (STEPS, ["diagnose"])
    assert out["steps"]["diagnose"] == {"error": "RuntimeError: store down"}
    assert "step diagnose failed" in caplog.text and "store down" in caplog.text
    # budgets and alert rules ran after it: the budget rule fired; the verdict rule had no diagnosis to judge
    assert BudgetViolation.objects.count() == 1 and not WindowDiagnosis.objects.exists()
    assert out["steps"]["alert_rules"]["firing"] == 1
    assert list(_messages(receiver)) == ["[FIRING] over budget llm-gateway"]
    assert not AlertState.objects.filter(rule=verdict).exists()


def test_a_failing_unit_stops_no_other_and_fails_its_step_after_them(slow_decode, beta, ingest, run, monkeypatch,
                                                                      caplog):
    other, key = beta
    ingest(key, f.request(*[f.attempt(start_ns=f.BASE_NS + i * 1000 * f.MS) for i in range(3)]))
    diagnose = jobs.run_diagnosis

    def timing_out(scope):
        if scope.project_id == slow_decode.id:
            raise RuntimeError("query timeout")
        return diagnose(scope)

    monkeypatch.setattr(jobs, "run_diagnosis", timing_out)
    out = run()
    # alpha's service failed, beta's was diagnosed all the same; the step is failed, with its summary kept
    assert out["failed"] == ["diagnose"]
    assert (out["steps"]["diagnose"]["verdicts"], out["steps"]["diagnose"]["errors"]) == ({"healthy": 1}, 1)
    assert list(WindowDiagnosis.objects.values_list("project_id", flat=True)) == [other.id]
    assert "diagnose: unit" in caplog.text and "query timeout" in caplog.text
    # not retried every minute: the service is queued again by its next new spans
    assert run(NOW + timedelta(minutes=1))["failed"] == []


def test_budget_rules_keep_their_state_while_the_budgets_step_fails(rules, receiver, run, monkeypatch):
    over, _ = rules
    assert run()["steps"]["alert_rules"]["firing"] == 2
    monkeypatch.setattr(evaluation, "evaluate_active", _fail)
    # a minute later the window 10:01-10:16 has no violation row, because none was computed: not a resolution
    out = run(NOW + timedelta(minutes=1))
    assert out["failed"] == ["budgets"]
    assert out["steps"]["alert_rules"]["firing"] == 1  # the verdict rule; the budget rule not judged
    assert AlertState.objects.get(rule=over).state == AlertState.FIRING
    assert len(receiver.requests) == 2


def test_one_beat_entry_runs_the_task_which_fails_loudly_after_running_every_step(slow_decode, monkeypatch):
    entry = app.conf.beat_schedule["run-minute-pipeline"]
    assert (entry["task"], entry["schedule"], entry["options"]["expires"]) == (
        "latency_obs.tasks.run_minute_pipeline", 60.0, 55)
    steps = {"analysis.tasks.materialize_request_buckets", "analysis.tasks.diagnose_recent_windows",
             "budgets.tasks.evaluate_recent_budgets", "alerts.tasks.evaluate_alert_rules"}
    assert not steps & {e["task"] for e in app.conf.beat_schedule.values()}  # each is a task for manual runs

    result = run_minute_pipeline.apply(args=[NOW.isoformat()]).get()  # JSON argument in, the summary out
    assert (result["now"], result["failed"]) == (NOW.isoformat(), [])
    monkeypatch.setattr(backlog, "dirty_hours", _fail)
    with pytest.raises(pipeline.PipelineError, match="materialize failed at"):
        run_minute_pipeline.apply(args=[NOW.isoformat()]).get()
    assert WindowDiagnosis.objects.count() == 1  # diagnose still ran after the failed materialize
