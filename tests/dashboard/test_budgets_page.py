"""The Budgets page: budgets created from the seed-003 preset or custom targets are stored exactly, edited and
deleted; violations are listed with their numbers; duplicates and bad values are refused with a message; forms need
a CSRF token; names render as text; a member of beta can neither see nor change alpha's budgets."""
import re
from datetime import datetime, timezone

import pytest
from django.test import Client
from django.utils.html import escape

from budgets.models import Budget, BudgetViolation
from budgets.stages import STAGES

HOSTILE_SERVICE = '<script>alert("svc")</script>'
HOSTILE_ROUTE = "/v1/\"'><img src=x onerror=alert(1)>"
NO_STAGES = {f"stage_{code}": "" for code in STAGES}






def post(c, action, project="alpha", **data):
    return c.post(f"/budgets/?project={project}", {"action": action, **data})


def custom(c, project="alpha", **data):
    return post(c, "custom", project, **{"service": "chat", "route": "", "percentile": "95", "total_ms": "2000",
                                         **NO_STAGES, **data})


def edit(c, budget, project="alpha", **data):
    fields = {"percentile": "95", "total_ms": "2500", **NO_STAGES, **data}
    return post(c, "edit", project, id=budget.pk, **{f"b{budget.pk}-{k}": v for k, v in fields.items()})


def stored(budget) -> tuple:
    budget.refresh_from_db()
    return budget.percentile, budget.total_ms, {t.stage: t.target_ms for t in budget.stages.all()}


def section(html, budget) -> str:
    return re.search(rf'<section class="card budget" id="budget-{budget.pk}">(.*?)</section>', html, re.S).group(1)


def test_preset_creates_the_seed_003_budget_and_lists_its_labelled_targets(ann, members):
    response = post(ann, "preset", service="chat-gateway", route="/v1/chat", preset="seed-003-2.5s")
    assert (response.status_code, response["Location"]) == (302, "/budgets/?project=alpha")
    budget = Budget.objects.get(project=members["ann"][1])
    assert (budget.service, budget.route, budget.name) == ("chat-gateway", "/v1/chat", "seed-003-2.5s")
    assert stored(budget) == (95, 2500.0, {"network": 150.0, "retrieval": 300.0, "prompt_build_policy": 150.0,
                                           "model": 1600.0, "tools_post": 300.0})

    html = ann.get("/budgets/?project=alpha").content.decode()
    assert "Budget for chat-gateway created." in html
    own = section(html, budget)
    assert "<h2>chat-gateway <small>/v1/chat</small></h2>" in own and "p95 target (ms)" in own
    assert '<tr class="total"><td>Total</td><td>2,500</td></tr>' in own
    assert (f'<tr id="target-{budget.pk}-model"><td>Model to final token (first token + stream)</td>'
            "<td>1,600</td></tr>") in own
    assert f'<tr id="target-{budget.pk}-network"><td>Network and headers</td><td>150</td></tr>' in own
    assert f'id="target-{budget.pk}-queue"' not in own  # no target for that stage: no row
    assert "No violations recorded." in own
    # the edit form starts from the stored values
    assert re.search(rf'name="b{budget.pk}-stage_model" value="1600.0"', own)
    assert re.search(rf'name="b{budget.pk}-stage_queue"(?![^>]*value=)[^>]*>', own)


def test_custom_budget_stores_exactly_the_targets_given(ann):
    response = custom(ann, service="rag", route="/v1/search", percentile="99", total_ms="1800.5",
                      stage_queue="100", stage_model="1500.25", stage_ttft="0")
    assert response.status_code == 302
    budget = Budget.objects.get(service="rag")
    assert budget.route == "/v1/search" and budget.name == ""
    assert stored(budget) == (99, 1800.5, {"queue": 100.0, "model": 1500.25, "ttft": 0.0})


def test_edit_replaces_the_targets_and_blank_removes_one(ann, alpha):
    budget = Budget.from_preset(alpha[0], "chat", "", "seed-003-2.5s")
    response = edit(ann, budget, percentile="90", total_ms="3000", stage_network="175", stage_model="1700",
                    stage_retry="50")
    assert (response.status_code, response["Location"]) == (302, "/budgets/?project=alpha")
    assert stored(budget) == (90, 3000.0, {"network": 175.0, "model": 1700.0, "retry": 50.0})
    assert (budget.service, budget.route) == ("chat", "")  # the edit form does not move a budget


def test_invalid_edit_shows_errors_and_changes_nothing(ann, alpha):
    budget = Budget.from_preset(alpha[0], "chat", "", "seed-003-2.5s")
    before = stored(budget)
    response = edit(ann, budget, percentile="97", total_ms="-1", stage_network="fast")
    html = response.content.decode()
    assert response.status_code == 200 and stored(budget) == before
    own = section(html, budget)
    assert "<details open>" in own
    assert '<p class="warning form-error">Percentile: Select a valid choice. 97 is not one of the available choices.</p>' in own
    assert '<p class="warning form-error">Total: Ensure this value is greater than or equal to 0.</p>' in own
    assert '<span class="warning form-error">Network and headers: Enter a number.</span>' in own


@pytest.mark.parametrize("data, error", [
    ({"service": ""}, "Service: This field is required."),
    ({"total_ms": ""}, "Total: This field is required."),
    ({"percentile": "42"}, "Percentile: Select a valid choice. 42 is not one of the available choices."),
    ({"stage_retrieval": "-5"}, "Retrieval and ranking: Ensure this value is greater than or equal to 0."),
])
def test_invalid_custom_budget_shows_the_error_and_creates_nothing(ann, data, error):
    response = custom(ann, **data)
    assert response.status_code == 200 and f'class="warning form-error">{error}</' in response.content.decode()
    assert Budget.objects.count() == 0


def test_duplicate_service_and_route_is_refused(ann, alpha):
    assert custom(ann, service="chat", route="/v1/chat").status_code == 302
    for response in (custom(ann, service="chat", route="/v1/chat"),
                     post(ann, "preset", service="chat", route="/v1/chat", preset="seed-003-2.5s")):
        assert response.status_code == 200
        assert ('<p class="warning form-error">chat already has a budget for route /v1/chat: edit that one instead.</p>'
                in response.content.decode())
    assert Budget.objects.count() == 1
    # another route of the same service, and all routes, are budgets of their own
    assert custom(ann, service="chat", route="/v1/other").status_code == 302
    assert post(ann, "preset", service="chat", route="", preset="seed-003-2.5s").status_code == 302
    assert post(ann, "preset", service="chat", route="", preset="seed-003-2.5s").status_code == 200
    assert "chat already has a budget for all routes" in custom(ann, service="chat").content.decode()
    assert Budget.objects.count() == 3


def test_unknown_preset_is_a_form_error(ann):
    response = post(ann, "preset", service="chat", route="", preset="seed-999")
    assert "Select a valid choice. seed-999 is not one of the available choices." in response.content.decode()
    assert Budget.objects.count() == 0


def test_delete_removes_the_budget_its_targets_and_violations(ann, alpha):
    budget = Budget.from_preset(alpha[0], "chat", "", "seed-003-2.5s")
    _violation(budget)
    response = post(ann, "delete", id=budget.pk)
    assert (response.status_code, response["Location"]) == (302, "/budgets/?project=alpha")
    assert not Budget.objects.exists() and not BudgetViolation.objects.exists()
    html = ann.get("/budgets/?project=alpha").content.decode()
    assert 'id="no-budgets"' in html and "Budget for chat deleted." in html


def _violation(budget, stage="model", minute=0, measured=2160.0, target=1600.0):
    start = datetime(2026, 1, 5, 10, minute, tzinfo=timezone.utc)
    return BudgetViolation.objects.create(budget=budget, start=start, end=start.replace(minute=minute + 15),
                                          stage=stage, percentile=95, measured_ms=measured, target_ms=target,
                                          over_ms=measured - target, requests=37)


def test_violations_are_listed_newest_first_with_their_numbers(ann, alpha):
    budget = Budget.from_preset(alpha[0], "chat", "", "seed-003-2.5s")
    other = Budget.from_preset(alpha[0], "rag", "", "seed-003-2.5s")
    model = _violation(budget)
    total = _violation(budget, stage="total", minute=15, measured=3104.4, target=2500.0)
    _violation(other, stage="network", measured=260.0, target=150.0)
    own = section(ann.get("/budgets/?project=alpha").content.decode(), budget)
    rows = re.findall(r'<tr class="violation warning" id="violation-(\d+)">(.*?)</tr>', own, re.S)
    assert [int(pk) for pk, _ in rows] == [total.pk, model.pk]
    assert rows[0][1] == ("<td>2026-01-05 10:15 – 10:30</td>\n      <td>Total</td><td>p95 3,104</td><td>2,500</td>\n"
                          "      <td><b>+604</b></td><td>37</td>")
    assert rows[1][1] == ("<td>2026-01-05 10:00 – 10:15</td>\n      <td>Model to final token (first token + stream)</td>"
                          "<td>p95 2,160</td><td>1,600</td>\n      <td><b>+560</b></td><td>37</td>")
    assert "Network and headers</td><td>p95 260" not in own  # the other budget's violation stays in its own box


def test_forms_need_a_csrf_token(members, clickhouse, alpha):
    budget = Budget.from_preset(alpha[0], "chat", "", "seed-003-2.5s")
    c = Client(enforce_csrf_checks=True)
    c.force_login(members["ann"][0])
    assert custom(c, service="no-token").status_code == 403
    assert post(c, "preset", service="no-token", route="", preset="seed-003-2.5s").status_code == 403
    assert edit(c, budget, total_ms="1").status_code == 403
    assert post(c, "delete", id=budget.pk).status_code == 403
    assert Budget.objects.count() == 1 and stored(budget)[1] == 2500.0

    html = c.get("/budgets/?project=alpha").content.decode()
    tokens = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert len(tokens) == 5  # preset, custom, edit and delete of the budget, log-out
    assert custom(c, service="with-token", csrfmiddlewaretoken=tokens[0]).status_code == 302
    assert Budget.objects.filter(service="with-token").count() == 1


def test_ben_cannot_see_or_change_alphas_budgets(ann, ben, alpha, beta):
    budget = Budget.from_preset(alpha[0], "alpha-chat", "", "seed-003-2.5s")
    Budget.from_preset(beta[0], "beta-chat", "", "seed-003-2.5s")
    assert ben.get("/budgets/?project=alpha").status_code == 404
    assert custom(ben, project="alpha", service="intruder").status_code == 404
    for project in ("alpha", "beta", ""):  # naming alpha, his own project, or none: alpha's budget id is not his
        query = f"?project={project}" if project else ""
        assert ben.post(f"/budgets/{query}", {"action": "delete", "id": budget.pk}).status_code == 404
        assert ben.post(f"/budgets/{query}", {"action": "edit", "id": budget.pk, f"b{budget.pk}-percentile": "50",
                                              f"b{budget.pk}-total_ms": "1"}).status_code == 404
    assert stored(budget)[:2] == (95, 2500.0) and not Budget.objects.filter(service="intruder").exists()

    html = ben.get("/budgets/").content.decode()
    assert "project beta" in html and "beta-chat" in html and "alpha-chat" not in html
    assert "alpha-chat" in ann.get("/budgets/?project=alpha").content.decode()


@pytest.mark.parametrize("data", [{"id": "999999"}, {"id": "abc"}, {}])
def test_unknown_or_malformed_budget_id_is_404(ann, data):
    assert post(ann, "delete", **data).status_code == 404
    assert post(ann, "edit", **data).status_code == 404
    assert post(ann, "explode").status_code == 404


def test_anonymous_is_sent_to_login_and_changes_nothing(client, members, clickhouse):
    response = client.get("/budgets/?project=alpha")
    assert (response.status_code, response["Location"]) == (302, "/login/?next=/budgets/%3Fproject%3Dalpha")
    assert custom(client, service="anon").status_code == 302 and not Budget.objects.exists()


def test_hostile_service_and_route_render_as_text(ann):
    assert custom(ann, service=HOSTILE_SERVICE, route=HOSTILE_ROUTE).status_code == 302
    budget = Budget.objects.get(service=HOSTILE_SERVICE, route=HOSTILE_ROUTE)  # stored as typed
    _violation(budget)
    refused = custom(ann, service=HOSTILE_SERVICE, route=HOSTILE_ROUTE)  # duplicate: echoed in the message
    for response in (ann.get("/budgets/?project=alpha"), refused):
        html = response.content.decode()
        assert HOSTILE_SERVICE not in html and HOSTILE_ROUTE not in html and "<img src=x" not in html
        assert escape(HOSTILE_SERVICE) in html and escape(HOSTILE_ROUTE) in html
