"""The SLOs page: SLOs created, edited and deleted through its forms are stored exactly; each is listed with its
compliance, error budget, not-measured share and burn rates as worked out from the traffic sent, and its burn-down
chart; bad values and duplicates are refused with a message; forms need a CSRF token; names render as text; a
member of beta can neither see nor change alpha's SLOs; the Alerts page offers the project's SLOs to slo_burn rules."""
import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils.html import escape

from alerts.models import AlertRule
from analysis.wording import fmt
from slos.models import Slo
from tests import factories as f
from tests.slos.traffic import mixed, send, truth

END = f.BASE + timedelta(hours=6)
AT_END = "start=2026-01-05T15:00:00Z&end=2026-01-05T16:00:00Z"  # the filter bar's end is the SLOs' "now"
HOSTILE = '<script>alert("svc")</script>'


def post(c, action, project="alpha", **data):
    return c.post(f"/slos/?project={project}", {"action": action, **data})


def create(c, project="alpha", **data):
    fields = {"service": "chat", "route": "", "tenant": "", "signal": "ttft", "threshold_ms": "1000",
              "objective": "0.99", "window_days": "28", **data}
    return post(c, "create", project, **fields)


def edit(c, slo, **data):
    fields = {"signal": slo.signal, "threshold_ms": slo.threshold_ms, "objective": slo.objective,
              "window_days": slo.window_days, **data}
    return post(c, "edit", id=slo.pk, **{f"s{slo.pk}-{k}": v for k, v in fields.items()})


def section(html, slo) -> str:
    return re.search(rf'<section class="card slo" id="slo-{slo.pk}">(.*?)</section>', html, re.S).group(1)


def test_create_stores_exactly_the_promise_and_lists_it(ann, alpha):
    response = create(ann, service="chat-gateway", route="/v1/chat", tenant="acme", threshold_ms="800",
                      objective="0.995", window_days="7", signal="total")
    assert (response.status_code, response["Location"]) == (302, "/slos/?project=alpha")
    slo = Slo.objects.get(project=alpha[0])
    assert (slo.service, slo.route, slo.tenant, slo.signal, slo.threshold_ms, slo.objective, slo.window_days) == (
        "chat-gateway", "/v1/chat", "acme", "total", 800.0, 0.995, 7)
    html = ann.get("/slos/?project=alpha").content.decode()
    assert "SLO chat-gateway /v1/chat tenant=acme: 99.5% total &lt; 800 ms (7 days) saved." in html
    own = section(html, slo)
    assert '<p class="promise">99.5% of requests total\n    &lt; 800 ms, over 7 days</p>' in own
    assert "No request of chat-gateway in the window yet." in own and 'class="compliance">not measured<' in own


def test_each_slo_shows_its_numbers_from_the_traffic_and_its_burn_down(ann, members, ingest):
    _, project, key = members["ann"]
    sent = mixed(f.BASE, 6, 300, {"fast": 0.85, "slow": 0.07, "failed": 0.03, "unstreamed": 0.05}, seed=4)
    send(ingest, key, project, sent, service="alpha-svc")
    slo = Slo.objects.create(project=project, service="alpha-svc", signal="ttft", threshold_ms=1000, objective=0.99,
                             window_days=7)
    expected = truth(sent, "ttft", 1000.0, END - timedelta(days=7), END)
    html = ann.get(f"/slos/?project=alpha&{AT_END}").content.decode()
    own = section(html, slo)
    assert f'class="compliance">{fmt(expected.good / expected.measured, "nines")}<' in own
    budget = 1 - expected.bad / (0.01 * expected.measured)
    assert f'{fmt(budget, "%")}</b>' in own and budget < 0 and 'class="budget warning"' in own
    assert f'class="counts">{expected.good} / {expected.bad}<' in own
    share = fmt(expected.unmeasured / expected.requests, "%")
    assert f"TTFT not measured for {share} of requests" in own and f'class="not-measured">{expected.unmeasured}<' in own
    hour = truth(sent, "ttft", 1000.0, END - timedelta(hours=1), END)
    assert f'title="{hour.measured} measured requests">{fmt(hour.bad / hour.measured / 0.01, "x")}</td>' in own
    spec = json.loads(re.search(rf'<script id="slo-{slo.pk}-burn-down" type="application/json">(.*?)</script>',
                                own, re.S).group(1))
    line = spec["data"][0]
    assert len(line["x"]) == 7 * 24 and line["y"][-1] == pytest.approx(round(budget * 100, 3))
    assert line["customdata"][-1] == fmt(budget, "%") and line["y"][0] == 100


def test_edit_changes_the_promise_and_keeps_the_scope(ann, alpha):
    slo = Slo.objects.create(project=alpha[0], service="chat", route="/v1/a", signal="ttft", threshold_ms=1000,
                             objective=0.99)
    assert edit(ann, slo, threshold_ms="1500", objective="0.9", window_days="30", signal="total").status_code == 302
    slo.refresh_from_db()
    assert (slo.service, slo.route, slo.signal, slo.threshold_ms, slo.objective, slo.window_days) == (
        "chat", "/v1/a", "total", 1500.0, 0.9, 30)


@pytest.mark.parametrize("data, error", [
    ({"objective": "1"}, "less than or equal to 0.99999"),
    ({"objective": "0.3"}, "greater than or equal to 0.5"),
    ({"threshold_ms": "0"}, "greater than or equal to 0.001"),
    ({"window_days": "14"}, "Select a valid choice"),
    ({"signal": "t_queue"}, "Select a valid choice"),
    ({"service": ""}, "This field is required"),
])
def test_bad_values_are_refused_with_the_reason_and_nothing_is_stored(ann, data, error):
    response = create(ann, **data)
    assert response.status_code == 200 and error in response.content.decode()
    assert not Slo.objects.exists()


def test_the_same_promise_twice_is_refused_and_a_bad_edit_changes_nothing(ann, alpha):
    slo = Slo.objects.create(project=alpha[0], service="chat", signal="ttft", threshold_ms=1000, objective=0.99,
                             window_days=28)
    html = create(ann).content.decode()
    assert "alpha already has this SLO: chat: 99% TTFT &lt; 1 s (28 days)." in html and Slo.objects.count() == 1
    assert create(ann, objective="0.999").status_code == 302  # another promise on the same service is fine
    other = Slo.objects.get(objective=0.999)
    assert "already has this SLO" in edit(ann, other, objective="0.99").content.decode()
    response = edit(ann, slo, objective="2")
    assert response.status_code == 200 and "<details open>" in section(response.content.decode(), slo)
    slo.refresh_from_db()
    assert slo.objective == 0.99


def test_delete_removes_the_slo_and_its_burn_rules(ann, alpha):
    slo = Slo.objects.create(project=alpha[0], service="chat", signal="ttft", threshold_ms=1000, objective=0.99)
    AlertRule.objects.create(project=alpha[0], name="burn", kind=AlertRule.SLO_BURN, service="chat", slo=slo)
    assert post(ann, "delete", id=slo.pk).status_code == 302
    assert not Slo.objects.exists() and not AlertRule.objects.exists()
    assert post(ann, "delete", id=slo.pk).status_code == 404
    assert post(ann, "explode", id=1).status_code == 404


def test_names_render_as_text(ann, alpha):
    slo = Slo.objects.create(project=alpha[0], service=HOSTILE, route=HOSTILE, signal="ttft", threshold_ms=1000,
                             objective=0.99)
    html = ann.get("/slos/?project=alpha").content.decode()
    assert HOSTILE not in html and escape(HOSTILE) in section(html, slo)


def test_forms_need_a_csrf_token(members, clickhouse, alpha):
    slo = Slo.objects.create(project=alpha[0], service="chat", signal="ttft", threshold_ms=1000, objective=0.99)
    c = Client(enforce_csrf_checks=True)
    c.force_login(members["ann"][0])
    assert create(c, service="no-token").status_code == 403
    assert edit(c, slo, objective="0.9").status_code == 403
    assert post(c, "delete", id=slo.pk).status_code == 403
    assert Slo.objects.count() == 1


def test_ben_cannot_see_or_change_alphas_slos(ann, ben, alpha, beta):
    slo = Slo.objects.create(project=alpha[0], service="alpha-chat", signal="ttft", threshold_ms=1000, objective=0.99)
    Slo.objects.create(project=beta[0], service="beta-chat", signal="ttft", threshold_ms=1000, objective=0.99)
    assert ben.get("/slos/?project=alpha").status_code == 404
    assert create(ben, project="alpha", service="intruder").status_code == 404
    for project in ("alpha", "beta", ""):
        query = f"?project={project}" if project else ""
        assert ben.post(f"/slos/{query}", {"action": "delete", "id": slo.pk}).status_code == 404
        assert ben.post(f"/slos/{query}", {"action": "edit", "id": slo.pk, f"s{slo.pk}-objective": "0.5"}).status_code == 404
    slo.refresh_from_db()
    assert slo.objective == 0.99 and not Slo.objects.filter(service="intruder").exists()
    html = ben.get("/slos/").content.decode()
    assert "beta-chat" in html and "alpha-chat" not in html


def test_the_nav_links_the_page_and_the_alerts_page_offers_the_projects_slos(ann, alpha, beta):
    own = Slo.objects.create(project=alpha[0], service="chat", signal="ttft", threshold_ms=1000, objective=0.99)
    theirs = Slo.objects.create(project=beta[0], service="chat", signal="ttft", threshold_ms=1000, objective=0.99)
    html = ann.get("/alerts/?project=alpha").content.decode()
    assert '<a href="/slos/?project=alpha" >SLOs</a>' in html
    assert f'<option value="{own.pk}">' in html and f'<option value="{theirs.pk}">' not in html
    response = ann.post("/alerts/?project=alpha", {
        "name": "chat burn", "kind": "slo_burn", "service": "chat", "route": "", "group_by": "service",
        "slo": own.pk, "bucket": "total", "percentile": 95, "threshold": 0, "min_requests": 20, "for_seconds": 0,
        "renotify_seconds": 0, "min_duration_minutes": 0, "verdicts": "", "enabled": "on"})
    assert response.status_code == 302
    rule = AlertRule.objects.get(name="chat burn")
    assert (rule.kind, rule.slo) == ("slo_burn", own)
    assert "chat: 99% TTFT &lt; 1 s (28 days): 1 h &amp; 5 min ≥ ×14.4" in ann.get("/alerts/?project=alpha").content.decode()
