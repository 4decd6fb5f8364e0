"""GET /api/v1/diagnosis: auth by read key or project membership, parameter errors, and the JSON contract.

The evidence collector (written against ClickHouse elsewhere) is the one thing stubbed: it returns canned
evidence for service "chat" and no requests for any other service, and records what it was asked.
"""
from datetime import timedelta

import pytest
from django.contrib.auth.models import User

from projects.models import ApiKey
from tests.analysis import evidence_samples as samples

URL = "/api/v1/diagnosis"
WINDOW = {"service": "chat", "start": "2026-01-05T10:00:00Z", "end": "2026-01-05T10:20:00Z"}


@pytest.fixture
def calls(monkeypatch, clickhouse):
    seen = []

    def fake_collect(scope):
        seen.append({"project_id": scope.project_id, "service": scope.service, "start": scope.start,
                     "end": scope.end, "route": scope.route, "tenant": scope.tenant})
        return samples.queue_backlog() if scope.service == "chat" else samples.no_requests()

    monkeypatch.setattr("analysis.diagnosis.service.collect", fake_collect)
    return seen


def get(client, key=None, **params):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.get(URL, {**WINDOW, **params}, headers=headers)


def test_read_key_gets_the_diagnosis_of_its_project(client, alpha, calls):
    project, key = alpha
    response = get(client, key, route="/v1/chat", tenant="acme")
    assert response.status_code == 200
    body = response.json()
    assert body["verdict"] == "queue_backlog"
    assert calls == [{"project_id": project.pk, "service": "chat", "start": calls[0]["start"],
                      "end": calls[0]["end"], "route": "/v1/chat", "tenant": "acme"}]
    assert calls[0]["start"].isoformat() == "2026-01-05T10:00:00+00:00"


def test_response_shape_is_the_contract(client, alpha, calls):
    body = get(client, alpha[1]).json()
    assert set(body) == {"verdict", "findings", "path", "missing", "sample", "recommendations", "layers", "evidence",
                         "coverage"}
    assert body["layers"] == {"role": "single", "calls": [], "called_by": []}  # traced at one layer
    assert set(body["path"][0]) == {"node", "question", "value", "threshold", "answer", "text"}
    assert body["path"][0]["text"] == "t_queue p95 43.6 s is above 1 s → yes"
    assert body["recommendations"] and all(set(r) == {"text", "why", "source"} for r in body["recommendations"])
    assert set(body["evidence"]["buckets"]["t_queue"]) == {"p50", "p95", "p99", "mean", "count"}
    assert body["evidence"]["buckets"]["t_queue"]["p95"] == 43600.0  # ms
    for key in ("gap_fraction", "churn", "tenants", "retries"):
        assert key in body["evidence"]


def test_ingest_only_key_is_forbidden(client, alpha, calls):
    _, raw = ApiKey.issue(alpha[0], ["ingest"])
    response = get(client, raw)
    assert response.status_code == 403
    assert response.json()["error"] == "missing_scope"
    assert calls == []


def test_unknown_key_is_unauthorized(client, db, calls):
    response = get(client, "lo_made_up")
    assert response.status_code == 401
    assert response.json()["error"] == "unknown_key"


def test_anonymous_without_key_is_unauthorized(client, db, calls):
    response = get(client)
    assert response.status_code == 401
    assert response.json()["error"] == "missing_key"


def test_member_session_diagnoses_their_project(client, alpha, calls):
    user = User.objects.create_user("alice", password="x")
    alpha[0].members.add(user)
    client.force_login(user)
    assert get(client).status_code == 200
    assert calls[0]["project_id"] == alpha[0].pk


def test_bob_cannot_diagnose_alices_project(client, alpha, beta, calls):
    user = User.objects.create_user("bob", password="x")
    beta[0].members.add(user)
    client.force_login(user)
    response = get(client, project="alpha")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"
    # bob's key names alice's project: refused too, and nothing was read
    response = get(client, beta[1], project="alpha")
    assert response.status_code == 404
    assert calls == []


def test_user_in_several_projects_names_one(client, alpha, beta, calls):
    user = User.objects.create_user("carol", password="x")
    user.projects.add(alpha[0], beta[0])
    client.force_login(user)
    response = get(client)
    assert response.status_code == 400 and response.json()["error"] == "missing_parameter"
    assert get(client, project="beta").status_code == 200
    assert calls[0]["project_id"] == beta[0].pk


def test_superuser_sees_any_project(client, alpha, calls):
    admin = User.objects.create_superuser("root", password="x")
    client.force_login(admin)
    assert get(client, project="alpha").status_code == 200


def test_user_without_project_gets_not_found(client, db, calls):
    client.force_login(User.objects.create_user("dave", password="x"))
    assert get(client).status_code == 404


@pytest.mark.parametrize("params", [{"start": "yesterday"}, {"end": "2026-13-40T00:00:00Z"}])
def test_bad_dates_are_refused(client, alpha, calls, params):
    response = get(client, alpha[1], **params)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "bad_date" and body["message"]


def test_end_not_after_start_is_refused(client, alpha, calls):
    response = get(client, alpha[1], end=WINDOW["start"])
    assert response.status_code == 400 and response.json()["error"] == "bad_date"


def test_offsets_and_naive_dates_are_utc(client, alpha, calls):
    # 11:00+01:00 is 10:00Z; a naive end is UTC
    assert get(client, alpha[1], start="2026-01-05T11:00:00+01:00", end="2026-01-05T10:20:00").status_code == 200
    assert calls[0]["start"].isoformat() == "2026-01-05T10:00:00+00:00"
    assert calls[0]["end"].isoformat() == "2026-01-05T10:20:00+00:00"


def test_window_too_large_is_refused(client, alpha, calls, settings):
    response = get(client, alpha[1], start="2026-01-01T00:00:00Z", end="2026-02-01T00:00:01Z")
    assert response.status_code == 400 and response.json()["error"] == "window_too_large"
    settings.ANALYSIS_MAX_WINDOW_DAYS = 40
    assert get(client, alpha[1], start="2026-01-01T00:00:00Z", end="2026-02-01T00:00:01Z").status_code == 200


def test_missing_parameters_are_named(client, alpha, calls):
    response = client.get(URL, {"service": "chat"}, headers={"Authorization": f"Bearer {alpha[1]}"})
    assert response.status_code == 400
    assert response.json()["error"] == "missing_parameter" and "start" in response.json()["message"]
    response = get(client, alpha[1], service="")
    assert response.status_code == 400 and "service" in response.json()["message"]


def test_unknown_service_is_not_found(client, alpha, calls):
    response = get(client, alpha[1], service="nope")
    assert response.status_code == 404
    assert response.json() == {"error": "unknown_service", "message": "no requests of service 'nope' in this window"}


def test_only_get_is_allowed(client, alpha, calls):
    assert client.post(URL, WINDOW, headers={"Authorization": f"Bearer {alpha[1]}"}).status_code == 405


def test_a_handful_of_real_runs_is_insufficient_data_at_the_products_default(client, alpha, ingest, settings):
    """2 runs of 2 attempts each (a failed try and its retry), sent through ingest: the API says insufficient_data
    with "2 runs; a verdict needs 30" (ANALYSIS_MIN_RUNS, the product's default; the test settings lower it)."""
    from analysis.rollups.materialize import materialize
    from tests import factories as f
    settings.ANALYSIS_MIN_RUNS = 30
    project, key = alpha
    spans = []
    for run in ("r1", "r2"):
        for attempt in (1, 2):
            spans.append(f.attempt(t_queue_ms=9000.0, attributes={"llm.run.id": run, "llm.attempt": attempt},
                                   start_ns=f.BASE_NS + (len(spans) + 1) * 60_000 * f.MS))
    ingest(key, f.request(*spans, service="tiny"))
    materialize(project.pk, f.BASE, f.BASE + timedelta(hours=1))
    body = client.get(URL, {"service": "tiny", "start": "2026-01-05T10:00:00Z", "end": "2026-01-05T11:00:00Z"},
                      headers={"Authorization": f"Bearer {key}"}).json()
    assert body["verdict"] == "insufficient_data"
    assert body["missing"][0] == "2 runs; a verdict needs 30" and body["sample"] == {"runs": 2, "needed": 30}
