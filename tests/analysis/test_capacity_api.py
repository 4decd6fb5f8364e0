"""GET /api/v1/capacity: auth by read key or membership (401/403/404 as the diagnosis API), parameter errors, and
the JSON contract, on the hand-built traffic of tests/analysis/capacity_spans.py."""

import pytest
from django.contrib.auth.models import User

from projects.models import ApiKey
from tests.analysis import capacity_spans as spans

URL = "/api/v1/capacity"
FIELDS = {"peak_rps", "mean_rps", "tokens_in", "tokens_out", "batching_factor", "instances", "gpu_hours",
          "cost_per_1k_requests_usd", "regions", "latency_vs_load", "reasons", "unit", "counts"}


@pytest.fixture
def sent(alpha, ingest):
    project, key = alpha
    spans.store(project, key, ingest)
    return alpha


def get(client, key=None, **params):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.get(URL, {"service": spans.SERVICE, **spans.WINDOW, **params}, headers=headers)


def test_read_key_gets_the_worksheet_of_its_project(client, sent):
    response = get(client, sent[1])
    assert response.status_code == 200
    body = response.json()
    assert FIELDS <= set(body)
    assert (body["service"], body["unit"], body["instances"]) == (spans.SERVICE, "runs", 2)
    assert set(body["tokens_in"]) == {"mean", "p95", "count"} and set(body["tokens_out"]) == {"mean", "p95", "count"}
    assert {r["region"] for r in body["regions"]} == {"us-east-1", "eu-west-1"}
    assert {"region", "peak_rps", "mean_rps", "instances", "gpu_hours"} <= set(body["regions"][0])
    curve = body["latency_vs_load"]
    assert {"measure", "unit", "objective", "levels", "knee_load", "peak_load", "headroom", "minutes_near_knee",
            "confidence", "sentence"} <= set(curve)
    assert body["cost_per_1k_requests_usd"] is None and "cost_per_1k_requests_usd" in body["reasons"]


def test_route_narrows_the_requests(client, sent):
    body = get(client, sent[1], route="/v1/chat/completions").json()
    assert body["route"] == "/v1/chat/completions" and body["counts"]["runs"] == 11
    assert any("shared with the service's other routes" in n for n in body["notes"])
    assert get(client, sent[1], route="/v1/none").json()["error"] == "unknown_service"


def test_ingest_only_key_is_forbidden(client, sent):
    _, raw = ApiKey.issue(sent[0], ["ingest"])
    response = get(client, raw)
    assert (response.status_code, response.json()["error"]) == (403, "missing_scope")


def test_unknown_and_missing_keys_are_unauthorized(client, sent):
    assert (get(client, "lo_made_up").status_code, get(client, "lo_made_up").json()["error"]) == (401, "unknown_key")
    response = get(client)
    assert (response.status_code, response.json()["error"]) == (401, "missing_key")


def test_member_session_reads_their_project(client, sent):
    user = User.objects.create_user("ann", password="x")
    sent[0].members.add(user)
    client.force_login(user)
    assert get(client).status_code == 200


def test_bob_cannot_read_alices_capacity(client, sent, beta):
    user = User.objects.create_user("bob", password="x")
    beta[0].members.add(user)
    client.force_login(user)
    response = get(client, project="alpha")
    assert (response.status_code, response.json()["error"]) == (404, "not_found")
    # bob's key reads his own project, where alice's service does not exist
    response = get(client, beta[1])
    assert (response.status_code, response.json()["error"]) == (404, "unknown_service")


def test_parameter_errors(client, sent):
    key = sent[1]
    assert get(client, key, service="").json()["error"] == "missing_parameter"
    assert get(client, key, start="soon").json()["error"] == "bad_date"
    assert get(client, key, start="2026-01-05T11:00:00Z").json()["error"] == "bad_date"
    response = get(client, key, start="2025-01-01T00:00:00Z")
    assert (response.status_code, response.json()["error"]) == (400, "window_too_large")
    assert client.post(URL, headers={"Authorization": f"Bearer {key}"}).status_code == 405
