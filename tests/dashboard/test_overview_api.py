"""GET /api/v1/overview (analysis/views.py): the Overview page's numbers as JSON (analysis/panels/overview.py), the
same numbers the page shows for the same scope; null where not measured; refused as GET /api/v1/diagnosis refuses
(401, 403, 400, 404)."""
import html
from datetime import timedelta

import pytest

from analysis.rollups.materialize import materialize
from analysis.wording import fmt
from projects.models import ApiKey
from tests import factories as f
from tests.dashboard.conftest import END, HOSTILE_ROUTE, START, WINDOW
from tests.dashboard.pages import chart, trace

URL = "/api/v1/overview"
SCOPE = {"service": "alpha-svc", **WINDOW}


def get(client, key=None, **params):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.get(URL, {**SCOPE, **params}, headers=headers)


def test_the_answer_is_what_the_overview_page_shows(client, ann_client, traffic, members):
    response = get(client, members["ann"][2])
    assert response.status_code == 200
    body = response.json()
    assert (body["service"], body["route"], body["tenant"]) == ("alpha-svc", "", "")
    assert (body["start"], body["end"]) == ("2026-01-05T09:55:00+00:00", "2026-01-05T11:00:00+00:00")
    # the conftest traffic: 40 attempts, none failed; t_queue 10 .. 49, TTFT = t_queue + 300: p50 329.5
    assert body["totals"] == {"requests": 40, "errors": 0, "error_share": 0.0}
    head = body["headline"]
    assert head["requests"] == 40 and head["buckets"]["ttft"]["p50_ms"] == pytest.approx(329.5)
    assert set(head["buckets"]["t_queue"]) == {"p50_ms", "p95_ms", "p99_ms", "mean_ms", "count"}
    page = ann_client.get("/", {"project": "alpha", **SCOPE})
    card = page.content.decode().split('id="window-totals"')[1].split("</div>")[0]
    ttft, total = head["buckets"]["ttft"], head["buckets"]["total"]
    assert f"attempts in window<b>{body['totals']['requests']}</b>" in card
    assert f"<b>{fmt(0.0, '%')}</b>" in card
    assert (f"<b>{fmt(ttft['p50_ms'], 'ms')} / {fmt(ttft['p95_ms'], 'ms')} / {fmt(ttft['p99_ms'], 'ms')}</b>" in card
            and f"<b>{fmt(total['p50_ms'], 'ms')} / {fmt(total['p95_ms'], 'ms')} / {fmt(total['p99_ms'], 'ms')}</b>"
            in card)
    assert head["text"] == (f"40 attempts, error rate 0%, TTFT p95 {fmt(ttft['p95_ms'], 'ms')}, "
                            f"total p95 {fmt(total['p95_ms'], 'ms')}")
    # the stacks' routes: t_queue p50 29 on /v1/chat/completions (10, 12 .. 48), 30 on the hostile route (11 .. 49)
    queue = trace(chart(page, "stack-p50"), "t_queue")
    routes = {html.escape(r["route"], quote=False): r["buckets"]["t_queue"]["p50_ms"] for r in body["by_route"]}
    assert routes == dict(zip(queue["x"], queue["y"])) == {"/v1/chat/completions": 29.0,
                                                          html.escape(HOSTILE_ROUTE, quote=False): 30.0}
    # the series: one point per 60 s bucket with attempts, as the TTFT chart draws them
    ttft_chart = chart(page, "ttft")
    points = body["series"]["points"]
    assert body["series"]["width_ms"] == 60_000 and sum(p["requests"] for p in points) == 40
    assert [p["at"] for p in points] == trace(ttft_chart, "ttft p95")["x"]
    assert [p["ttft"]["p95_ms"] for p in points] == trace(ttft_chart, "ttft p95")["y"]
    # traced at one layer: no call seen at two
    assert body["layers"]["linked"] == 0 and body["layers"]["t_gateway"] == {"p50_ms": None, "p95_ms": None}


def test_route_and_tenant_narrow_it_as_they_narrow_the_page(client, traffic, members):
    body = get(client, members["ann"][2], tenant="acme").json()
    # acme's 20 attempts: t_queue 10, 12 .. 48 -> p50 29
    assert body["tenant"] == "acme" and body["headline"]["requests"] == 20
    assert body["headline"]["buckets"]["t_queue"]["p50_ms"] == 29.0


def test_not_measured_is_null_never_zero(client, members, ingest):
    _, alpha, key = members["ann"]
    # non-streaming calls: queued, admitted 10 ms later, released at 500 ms; no first or last token
    spans = [f.span(name="llm.request", duration_ms=500, events={"queued": 0, "admitted": 10, "released": 500},
                    attributes={"tenant.id": "acme", "llm.route": "/v1/chat", "llm.connection.reused": True})
             for _ in range(3)]
    ingest(key, f.request(*spans, service="plain-svc"))
    materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    body = get(client, key, service="plain-svc").json()
    buckets = body["headline"]["buckets"]
    assert buckets["ttft"] == {"p50_ms": None, "p95_ms": None, "p99_ms": None, "mean_ms": None, "count": 0}
    assert buckets["t_stream"]["p95_ms"] is None and buckets["t_queue"]["p95_ms"] == 10.0
    assert buckets["total"]["p50_ms"] == 500.0 and body["totals"]["error_share"] == 0.0  # measured: no error
    assert all(p["ttft"] == {"p50_ms": None, "p95_ms": None, "p99_ms": None} for p in body["series"]["points"])
    assert "TTFT p95 not measured" in body["headline"]["text"]


def test_refused_as_the_diagnosis_api_refuses(client, traffic, members, beta):
    project, key = members["ann"][1:]
    assert (get(client).status_code, get(client).json()["error"]) == (401, "missing_key")
    assert get(client, "lo_made_up").json()["error"] == "unknown_key"
    _, ingest_only = ApiKey.issue(project, ["ingest"])
    assert (get(client, ingest_only).status_code, get(client, ingest_only).json()["error"]) == (403, "missing_scope")
    for params, reason in (({"service": ""}, "missing_parameter"), ({"start": "yesterday"}, "bad_date"),
                           ({"end": WINDOW["start"]}, "bad_date"), ({"start": ""}, "missing_parameter"),
                           ({"start": "2026-01-01T00:00:00Z", "end": "2026-02-01T00:00:01Z"}, "window_too_large")):
        response = get(client, key, **params)
        assert (response.status_code, response.json()["error"]) == (400, reason), params
        assert response["X-Latency-Obs-Reason"] == reason
    response = get(client, key, service="nope")
    assert (response.status_code, response.json()["error"]) == (404, "unknown_service")
    # beta's key names alpha's project: not found, as a made-up name
    assert get(client, beta[1], project="alpha").json()["error"] == "not_found"
    # and beta's own window has no alpha-svc: its numbers are not beta's to read
    assert get(client, beta[1]).json()["error"] == "unknown_service"


def test_a_member_session_reads_it(client, traffic, members):
    client.force_login(members["ann"][0])
    assert get(client).json()["headline"]["requests"] == 40
    client.force_login(members["ben"][0])
    assert get(client, project="alpha").status_code == 404
