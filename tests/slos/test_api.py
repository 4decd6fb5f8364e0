"""GET /api/v1/slos: a read key's (or a member's session's) project only, every SLO with its numbers as worked out
from the traffic sent; 401 without a key or with an unknown one, 403 for an ingest-only key, 404 for another
project's name; ?service= narrows, ?end= moves the windows, a bad one is refused."""
from datetime import timedelta

import pytest
from django.contrib.auth.models import User

from projects.models import ApiKey
from slos.models import Slo
from tests import factories as f
from tests.slos.traffic import mixed, send, truth

END = f.BASE + timedelta(hours=6)
URL = "/api/v1/slos"


def get(client, key=None, **params):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"} if key else {}
    return client.get(URL, params, **headers)


@pytest.fixture
def slo(alpha):
    return Slo.objects.create(project=alpha[0], service="llm-gateway", signal="ttft", threshold_ms=1000,
                              objective=0.99, window_days=7)


def test_read_key_gets_each_slo_with_its_numbers(client, alpha, slo, ingest):
    project, key = alpha
    sent = mixed(f.BASE, 6, 200, {"fast": 0.8, "slow": 0.1, "failed": 0.05, "unstreamed": 0.05}, seed=9)
    send(ingest, key, project, sent)
    body = get(client, key, end="2026-01-05T16:00:00Z").json()
    expected = truth(sent, "ttft", 1000.0, END - timedelta(days=7), END)
    [doc] = body["slos"]
    assert (body["project"], body["end"]) == ("alpha", "2026-01-05T16:00:00+00:00")
    assert {k: doc[k] for k in ("id", "service", "route", "tenant", "signal", "threshold_ms", "objective",
                                "window_days", "description")} == {
        "id": slo.pk, "service": "llm-gateway", "route": "", "tenant": "", "signal": "ttft", "threshold_ms": 1000.0,
        "objective": 0.99, "window_days": 7, "description": "llm-gateway: 99% TTFT < 1 s (7 days)"}
    assert doc["requests"] == {"good": expected.good, "bad": expected.bad, "not_measured": expected.unmeasured}
    assert doc["compliance"] == pytest.approx(expected.good / expected.measured, rel=1e-12)
    assert doc["budget_remaining"] == pytest.approx(1 - expected.bad / (0.01 * expected.measured), rel=1e-12)
    assert doc["not_measured_share"] == pytest.approx(expected.unmeasured / expected.requests, rel=1e-12)
    assert doc["not_measured"].startswith("not measured for ") and doc["not_measured"].endswith("% of requests")
    hour = truth(sent, "ttft", 1000.0, END - timedelta(hours=1), END)
    assert doc["burn_rates"]["1h"] == pytest.approx(hour.bad / hour.measured / 0.01, rel=1e-9)
    assert doc["burn_measured"]["1h"] == hour.measured and set(doc["burn_rates"]) == {"5m", "30m", "1h", "6h"}
    assert doc["paging"] == [] or set(doc["paging"]) <= {"fast", "slow"}
    assert len(doc["burn_down"]) == 168 and doc["burn_down"][-1] == {
        "at": "2026-01-05T16:00:00+00:00", "budget_remaining": doc["budget_remaining"]}
    assert (doc["start"], doc["note"]) == ("2025-12-29T16:00:00+00:00", None)


def test_service_narrows_and_an_slo_without_traffic_is_null_not_zero(client, alpha, slo, clickhouse):
    Slo.objects.create(project=alpha[0], service="other", signal="total", threshold_ms=3000, objective=0.9)
    assert [d["service"] for d in get(client, alpha[1]).json()["slos"]] == ["llm-gateway", "other"]
    [doc] = get(client, alpha[1], service="other").json()["slos"]
    assert doc["requests"] == {"good": 0, "bad": 0, "not_measured": 0}
    assert (doc["compliance"], doc["budget_remaining"], doc["not_measured_share"], doc["not_measured"]) == (
        None, None, None, None)
    assert get(client, alpha[1], service="nothing").json()["slos"] == []


def test_no_key_is_401_an_unknown_one_too_and_an_ingest_key_403(client, alpha, slo):
    assert (get(client).status_code, get(client).json()["error"]) == (401, "missing_key")
    response = get(client, "lo_made_up")
    assert (response.status_code, response.json()["error"]) == (401, "unknown_key")
    _, ingest_only = ApiKey.issue(alpha[0], ["ingest"])
    response = get(client, ingest_only)
    assert (response.status_code, response.json()["error"]) == (403, "missing_scope")


def test_beta_sees_none_of_alphas_slos(client, alpha, beta, slo, clickhouse):
    Slo.objects.create(project=beta[0], service="beta-svc", signal="ttft", threshold_ms=500, objective=0.95)
    assert [d["service"] for d in get(client, beta[1]).json()["slos"]] == ["beta-svc"]
    response = get(client, beta[1], project="alpha")
    assert (response.status_code, response.json()["error"]) == (404, "not_found")
    ben = User.objects.create_user("ben", password="x")
    beta[0].members.add(ben)
    client.force_login(ben)
    assert get(client, project="alpha").status_code == 404
    assert [d["service"] for d in get(client).json()["slos"]] == ["beta-svc"]  # his session, his project


def test_a_bad_end_is_refused_and_only_get_is_allowed(client, alpha, clickhouse):
    response = get(client, alpha[1], end="yesterday")
    assert (response.status_code, response.json()["error"]) == (400, "bad_date")
    assert client.post(URL, HTTP_AUTHORIZATION=f"Bearer {alpha[1]}").status_code == 405
