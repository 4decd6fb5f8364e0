"""Budgets: exact percentiles per stage, stored violations, presets and the create_budget command."""
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from analysis.fairness import Deadline
from analysis.panels import budgets as stage_panel
from analysis.reads.queries import stage_percentiles
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from budgets import tasks
from budgets.evaluation import evaluate, evaluate_active, evaluate_recent, not_evaluated
from budgets.models import Budget, BudgetViolation, StageTarget
from budgets.presets import PRESETS
from budgets.stages import STAGES
from latency_obs.celery import app
from tests import factories as f
from tests.helpers import Ticks

SVC = "llm-gateway"
START, END = f.BASE, f.BASE + timedelta(days=1)


@pytest.fixture
def send(ingest):
    """send(project, key, *requests): ingest and materialize the project's window."""
    def go(project, key, *requests):
        ingest(key, *requests)
        materialize(project.pk, START, END)
    return go


def _request(route="/v1/chat/completions", service=SVC):
    """Five attempts, worked out by hand (sorted values; p95 sits at rank 3.8 of 0..4):
    model = 300 + stream: 1300 1400 1500 1600 2300 -> p95 1600 + 0.8 x 700 = 2160, p50 1500
    total = 20 + 300 + stream + 15: 1335 1435 1535 1635 2335 -> p95 2195
    network: 100 100 100 100 300 -> p95 260; prompt_build_policy (tokenize 50 + policy 50): 100 each
    tools_post: tool 100 each, post 250 on the last -> 100 100 100 100 350 -> p95 300 (= the target)
    no retrieval spans: retrieval has no value."""
    spans = []
    for i, stream in enumerate((1000, 1100, 1200, 1300, 2000)):
        a = f.attempt(t_queue_ms=20, t_first_token_ms=300, t_stream_ms=stream, t_post_ms=15, route=route)
        spans += [a, f.stage(a, "network", 20, 300 if i == 4 else 100), f.stage(a, "tokenize", 30, 50),
                  f.stage(a, "policy", 80, 50), f.stage(a, "tool", 400, 100)]
        if i == 4:
            spans.append(f.stage(a, "post", 2300, 250))
    return f.request(*spans, service=service)


def _by_stage(violations):
    return {v.stage: (pytest.approx(v.measured_ms), pytest.approx(v.over_ms), v.requests) for v in violations}


def test_stage_percentiles_are_exact(alpha, send):
    project, key = alpha
    send(project, key, _request())
    m = stage_percentiles(Scope(project.pk, SVC, START, END), 95)
    assert m["requests"] == 5
    assert m["model"] == {"value": pytest.approx(2160), "count": 5}
    assert m["total"] == {"value": pytest.approx(2195), "count": 5}
    assert m["network"] == {"value": pytest.approx(260), "count": 5}
    assert m["prompt_build_policy"] == {"value": pytest.approx(100), "count": 5}
    assert m["tools_post"] == {"value": pytest.approx(300), "count": 5}
    assert m["post"] == {"value": pytest.approx(250), "count": 1}
    assert m["retrieval"] == {"value": None, "count": 0}
    assert m["queue"]["value"] == pytest.approx(20) and m["ttft"]["value"] == pytest.approx(320)
    assert set(STAGES) <= set(m)
    assert stage_percentiles(Scope(project.pk, SVC, START, END), 50)["model"]["value"] == pytest.approx(1500)
    with pytest.raises(ValueError):
        stage_percentiles(Scope(project.pk, SVC, START, END), 97)


def test_evaluate_records_overspent_stages_with_exact_over_ms(alpha, send):
    project, key = alpha
    send(project, key, _request())
    budget = Budget.from_preset(project, SVC, "", "seed-003-2.5s")
    found = evaluate(budget, START, END, min_requests=5)
    # model 2160 vs 1600, network 260 vs 150; total 2195 < 2500, tools_post 300 = 300, no retrieval data
    assert _by_stage(found) == {"model": (2160, 560, 5), "network": (260, 110, 5)}
    assert set(_by_stage(BudgetViolation.objects.all())) == {"model", "network"}
    v = BudgetViolation.objects.get(stage="model")
    assert (v.percentile, v.target_ms, v.start, v.end) == (95, 1600, START, END)


def test_violations_are_the_stage_panels_numbers(alpha, send):
    project, key = alpha
    send(project, key, _request())
    measured = stage_panel.build(Scope(project.pk, SVC, START, END), 95)
    # _request's p95s: model 2160, network 260 over 5 requests; retrieval has no value
    assert (measured.requests, measured.stages["model"], measured.stages["retrieval"]) == (
        5, stage_panel.Stage(value_ms=pytest.approx(2160), count=5), stage_panel.Stage(value_ms=None, count=0))
    found = evaluate(Budget.from_preset(project, SVC, "", "seed-003-2.5s"), START, END, min_requests=5)
    assert {v.stage: (v.measured_ms, v.requests) for v in found} == {
        stage: (measured.stages[stage].value_ms, measured.stages[stage].count) for stage in ("model", "network")}


def test_total_violation_and_another_percentile(alpha, send):
    project, key = alpha
    send(project, key, _request())
    budget = Budget.objects.create(project=project, service=SVC, total_ms=2000, percentile=50)
    StageTarget.objects.create(budget=budget, stage="model", target_ms=1400)
    # p50: total 1535 (under 2000); model 1500 over 1400 by 100
    assert _by_stage(evaluate(budget, START, END, min_requests=1)) == {"model": (1500, 100, 5)}
    budget.percentile, budget.total_ms = 95, 2000
    budget.save()
    assert _by_stage(evaluate(budget, START, END, min_requests=1)) == {"total": (2195, 195, 5), "model": (2160, 760, 5)}


def test_re_evaluation_replaces_the_window(alpha, send):
    project, key = alpha
    send(project, key, _request())
    budget = Budget.from_preset(project, SVC, "", "seed-003-2.5s")
    evaluate(budget, START, END, min_requests=5)
    evaluate(budget, START, END, min_requests=5)
    assert BudgetViolation.objects.count() == 2
    budget.stages.filter(stage="model").update(target_ms=2500)
    assert _by_stage(evaluate(budget, START, END, min_requests=5)) == {"network": (260, 110, 5)}
    assert list(BudgetViolation.objects.values_list("stage", flat=True)) == ["network"]
    # another window is kept apart
    evaluate(budget, START, END - timedelta(hours=1), min_requests=5)
    assert BudgetViolation.objects.count() == 2


def test_min_requests_skips_thin_stages(alpha, send):
    project, key = alpha
    send(project, key, _request())
    budget = Budget.from_preset(project, SVC, "", "seed-003-2.5s")
    StageTarget.objects.create(budget=budget, stage="post", target_ms=10)  # only 1 request has post spans
    assert set(_by_stage(evaluate(budget, START, END, min_requests=5))) == {"model", "network"}
    assert set(_by_stage(evaluate(budget, START, END, min_requests=1))) == {"model", "network", "post"}
    assert evaluate(budget, START, END, min_requests=6) == []
    assert BudgetViolation.objects.count() == 0  # the earlier violations of the window are gone


def test_route_filter(alpha, send):
    project, key = alpha
    fast = f.request(*[f.attempt(t_first_token_ms=100, t_stream_ms=500, route="/fast") for _ in range(3)])
    send(project, key, _request(route="/slow"), fast)
    slow = Budget.objects.create(project=project, service=SVC, route="/slow", total_ms=1000)
    quick = Budget.objects.create(project=project, service=SVC, route="/fast", total_ms=1000)
    # /fast: total 20 + 100 + 500 + 15 = 635 each
    assert _by_stage(evaluate(slow, START, END, min_requests=1)) == {"total": (2195, 1195, 5)}
    assert evaluate(quick, START, END, min_requests=1) == []
    assert stage_percentiles(Scope(project.pk, SVC, START, END, route="/fast"),
                             95)["total"] == {"value": 635, "count": 3}
    assert stage_percentiles(Scope(project.pk, SVC, START, END), 95)["requests"] == 8


def test_another_projects_data_never_counts(alpha, beta, send):
    (project, key), (other, other_key) = alpha, beta
    send(project, key, f.request(*[f.attempt(t_stream_ms=500) for _ in range(3)]))
    send(other, other_key, _request())  # same service name, much slower
    budget = Budget.objects.create(project=project, service=SVC, total_ms=1000)
    StageTarget.objects.create(budget=budget, stage="network", target_ms=1)
    assert evaluate(budget, START, END, min_requests=1) == []  # total 835; alice has no network spans
    assert stage_percentiles(Scope(project.pk, SVC, START, END))["requests"] == 3
    assert evaluate_active(START, END, min_requests=1) == {"budgets": 1, "violations": 0, "deferred": 0, "errors": 0}


def test_preset_is_the_seed_budget(alpha):
    # seed text 003: 2.5 s p95 = 150 network + 300 retrieval + 150 prompt/policy + 1,600 model + 300 tools/post
    preset = PRESETS["seed-003-2.5s"]
    assert preset == {"percentile": 95, "total_ms": 2500, "stages": {
        "network": 150, "retrieval": 300, "prompt_build_policy": 150, "model": 1600, "tools_post": 300}}
    assert sum(preset["stages"].values()) == preset["total_ms"]
    budget = Budget.from_preset(alpha[0], SVC, "/v1/chat", "seed-003-2.5s")
    assert (budget.percentile, budget.total_ms, budget.route) == (95, 2500, "/v1/chat")
    assert dict(budget.stages.values_list("stage", "target_ms")) == preset["stages"]
    with pytest.raises(KeyError):
        Budget.from_preset(alpha[0], SVC, "", "nope")


def _create(*args):
    out = StringIO()
    call_command("create_budget", *args, stdout=out)
    return out.getvalue()


def test_create_budget_command(alpha):
    out = _create("--project", "alpha", "--service", SVC, "--route", "/v1/chat", "--total-ms", "3000",
                  "--stage", "model=2000", "--stage", "queue=200", "--percentile", "99")
    budget = Budget.objects.get(route="/v1/chat")
    assert (budget.total_ms, budget.percentile) == (3000, 99)
    assert dict(budget.stages.values_list("stage", "target_ms")) == {"model": 2000, "queue": 200}
    assert "model=2000" in out
    _create("--project", "alpha", "--service", SVC, "--preset", "seed-003-2.5s")
    assert Budget.objects.get(route="").stages.count() == 5


@pytest.mark.parametrize("args, message", [
    (["--total-ms", "1000", "--stage", "gpu=5"], "unknown stage 'gpu'"),
    (["--total-ms", "1000", "--stage", "model"], "expected NAME=MS"),
    (["--total-ms", "1000", "--stage", "model=fast"], "is not a number"),
    (["--total-ms", "-1"], "must be a number of ms >= 0"),
    (["--total-ms", "1000", "--percentile", "97"], "percentile must be one of 50, 90, 95, 99"),
    (["--preset", "seed-999"], "unknown preset 'seed-999'"),
    (["--preset", "seed-003-2.5s", "--total-ms", "5"], "not both"),
    ([], "give --preset or --total-ms"),
])
def test_create_budget_rejects_bad_input(alpha, args, message):
    with pytest.raises(CommandError, match=message):
        _create("--project", "alpha", "--service", SVC, *args)
    assert Budget.objects.count() == 0


def test_create_budget_rejects_unknown_project_and_duplicates(alpha):
    with pytest.raises(CommandError, match="no project named 'nope'"):
        _create("--project", "nope", "--service", SVC, "--total-ms", "1")
    _create("--project", "alpha", "--service", SVC, "--total-ms", "1")
    with pytest.raises(CommandError, match="already exists"):
        _create("--project", "alpha", "--service", SVC, "--total-ms", "2")


def test_task_evaluates_the_recent_window_at_its_now_and_marks_it_evaluated(alpha, send):
    project, key = alpha
    send(project, key, *[_request() for _ in range(4)])  # 20 attempts: each of _request()'s values 4 times
    budget = Budget.objects.create(project=project, service=SVC, total_ms=2000, percentile=95)
    now = f.BASE + timedelta(minutes=15, seconds=30)  # the minute ending at 10:15: the window 10:00-10:15
    window_end = f.BASE + timedelta(minutes=15)
    assert not_evaluated([budget.pk], window_end) == {budget.pk}
    result = tasks.evaluate_recent_budgets.apply(args=[now.isoformat()]).get()
    assert result == {"window": [f.BASE.isoformat(), window_end.isoformat()], "budgets": 1, "violations": 1,
                      "deferred": 0, "errors": 0}
    # total p95 at rank 0.95 x 19 = 18.05 of the sorted 20: 2335 (ranks 16-19) -> 335 over 2000
    v = BudgetViolation.objects.get()
    assert (v.stage, v.measured_ms, v.over_ms, v.requests, v.start, v.end) == ("total", 2335, 335, 20, f.BASE,
                                                                                 window_end)
    assert not_evaluated([budget.pk], window_end) == set()
    assert not_evaluated([budget.pk], window_end - timedelta(minutes=1)) == set()
    assert not_evaluated([budget.pk], window_end + timedelta(minutes=1)) == {budget.pk}  # a window it has not seen yet
    tasks.evaluate_recent_budgets.apply(args=[(now - timedelta(hours=1)).isoformat()]).get()
    assert not_evaluated([budget.pk], window_end) == set()  # redoing an older window does not move the mark back


def test_projects_take_turns_and_the_budgets_left_for_lack_of_time_go_first(alpha, beta, clickhouse):
    a1, a2 = (Budget.objects.create(project=alpha[0], service=s, total_ms=1) for s in ("s1", "s2"))
    b1 = Budget.objects.create(project=beta[0], service="s1", total_ms=1)

    def minute(m):
        """Room for two budgets (fake clock, a second each); returns (deferred, the budgets evaluated)."""
        out = evaluate_recent(f.BASE + timedelta(minutes=15 + m, seconds=30), Deadline(6, clock=Ticks()))
        evaluated = Budget.objects.filter(evaluated_until=f.BASE + timedelta(minutes=15 + m))
        return out["deferred"], set(evaluated.values_list("pk", flat=True))

    assert minute(0) == (1, {a1.pk, b1.pk})  # one of each project, not alpha's two
    assert minute(1) == (1, {a2.pk, b1.pk})  # alpha's one left first; beta's only one every minute
    assert minute(2) == (1, {a1.pk, b1.pk})


def test_task_runs_every_minute_in_the_minute_pipeline_and_alone_at_the_clock(alpha, clickhouse):
    entry = app.conf.beat_schedule["run-minute-pipeline"]
    assert (entry["task"], entry["schedule"]) == ("latency_obs.tasks.run_minute_pipeline", 60.0)
    assert "budgets.tasks.evaluate_recent_budgets" not in {e["task"] for e in app.conf.beat_schedule.values()}
    Budget.objects.create(project=alpha[0], service=SVC, total_ms=1)
    result = tasks.evaluate_recent_budgets.apply().get()
    start, end = result["window"]
    assert (result["budgets"], result["violations"]) == (1, 0)  # no traffic now
    assert (f.datetime.fromisoformat(end) - f.datetime.fromisoformat(start)) == timedelta(minutes=15)
