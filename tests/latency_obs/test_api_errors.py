"""/api/ and /v1/ answer every error in JSON (404, 405, 400, 500, DEBUG pages); other pages keep HTML."""
import pytest
from django.test import Client

from analysis.errors import AnalysisError
from ingest.errors import IngestError
from ingest.limits import OverLimit
from projects.errors import AccessError
from projects.keys import KeyError_
from store.client import ClickHouseError
from store.errors import ReasonError
from tests import factories as f


def json_error(response, status: int, reason: str) -> dict:
    assert (response.status_code, response["Content-Type"]) == (status, "application/json"), response.content[:200]
    body = response.json()
    assert body["error"] == response["X-Latency-Obs-Reason"] == reason
    assert body["message"]
    return body


@pytest.fixture
def raising_client():
    """A client that gets the answer a user gets when a view raises, instead of the exception."""
    return Client(raise_request_exception=False)


@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/", "/api/v2/diagnosis", "/v1/profiles", "/v1/", "/v1/traces/x"])
def test_unknown_api_path_is_a_json_404(client, db, path):
    json_error(client.get(path), 404, "not_found")
    json_error(client.post(path, data=b"x", content_type="application/x-protobuf"), 404, "not_found")


@pytest.mark.parametrize("method, path, allowed", [
    ("get", "/v1/traces", "POST"), ("put", "/v1/traces", "POST"), ("delete", "/v1/traces", "POST"),
    ("post", "/api/v1/diagnosis", "GET"), ("put", "/api/v1/ingest/status", "GET"),
])
def test_wrong_method_on_an_api_path_is_a_json_405_naming_the_allowed_one(client, db, method, path, allowed):
    response = getattr(client, method)(path)
    body = json_error(response, 405, "method_not_allowed")
    assert response["Allow"] == allowed and allowed in body["message"]


def test_unknown_method_is_a_json_405(client, db):
    json_error(client.generic("BREW", "/v1/traces"), 405, "method_not_allowed")


def test_disallowed_host_on_an_api_path_is_a_json_400(client, db, settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    json_error(client.get("/api/v1/ingest/status", HTTP_HOST="evil.example"), 400, "bad_request")


def test_exception_in_the_ingest_view_is_a_json_500(raising_client, alpha, monkeypatch):
    _, key = alpha
    monkeypatch.setattr("ingest.views.export", lambda *args: 1 / 0)
    response = raising_client.post("/v1/traces", data=f.request(f.attempt()).SerializeToString(),
                                   content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {key}")
    json_error(response, 500, "internal_error")


def test_exception_in_the_read_api_is_a_json_500(raising_client, alpha, monkeypatch):
    _, key = alpha
    monkeypatch.setattr("analysis.views.run_diagnosis", lambda *args, **kwargs: 1 / 0)
    response = raising_client.get("/api/v1/diagnosis?service=s&start=2026-01-05T10:00:00Z&end=2026-01-05T11:00:00Z",
                                  HTTP_AUTHORIZATION=f"Bearer {key}")
    json_error(response, 500, "internal_error")


def test_debug_pages_on_api_paths_are_json_too(raising_client, db, settings, monkeypatch):
    settings.DEBUG = True
    json_error(raising_client.get("/api/v1/nope"), 404, "not_found")
    monkeypatch.setattr("analysis.views.readable_project", lambda request: 1 / 0)
    json_error(raising_client.get("/api/v1/diagnosis"), 500, "internal_error")


def test_pages_outside_the_api_keep_html_errors(raising_client, db, monkeypatch):
    response = raising_client.get("/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
    monkeypatch.setattr("latency_obs.views.get_writer", lambda: 1 / 0)
    response = raising_client.get("/healthz")
    assert response.status_code == 500 and response["Content-Type"].startswith("text/html")


def test_rewritten_answers_keep_the_headers_other_middleware_set(client, db, settings):
    settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS = False, 3600
    response = client.get("/v1/traces", secure=True)  # HSTS goes on secure answers only
    json_error(response, 405, "method_not_allowed")
    assert response["Strict-Transport-Security"] == "max-age=3600"


# --- ReasonError: the one base of the API's errors, answered in one place --------------------------------

def test_every_api_error_has_the_one_base():
    for cls in (IngestError, OverLimit, AnalysisError, KeyError_, AccessError, ClickHouseError):
        assert issubclass(cls, ReasonError), cls
    assert (IngestError("malformed_json", "m").status, OverLimit("rate_limited", "m").status) == (400, 429)
    assert (KeyError_("unknown_key", "m").status, KeyError_("missing_scope", "m").status) == (401, 403)
    assert ClickHouseError("unavailable", "m").status == 503


def test_a_reason_error_raised_by_an_api_view_is_answered_as_json(client, alpha, monkeypatch):
    def over(*args, **kwargs):
        raise OverLimit("rate_limited", "slow down", retry_after=2.5)

    monkeypatch.setattr("analysis.views.run_diagnosis", over)
    response = client.get("/api/v1/diagnosis?service=s&start=2026-01-05T10:00:00Z&end=2026-01-05T11:00:00Z",
                          HTTP_AUTHORIZATION=f"Bearer {alpha[1]}")
    assert json_error(response, 429, "rate_limited") == {"error": "rate_limited", "message": "slow down"}
    assert response["Retry-After"] == "3"  # whole seconds, rounded up


@pytest.mark.parametrize("code, reason", [(None, "store_error"), (159, "query_timeout")])
def test_ingest_status_answers_a_store_failure_503_without_its_details(client, alpha, monkeypatch, code, reason):
    def down(project_id):
        raise ClickHouseError("unavailable", "cannot reach ClickHouse at ch.internal: connection refused", code)

    monkeypatch.setattr("ingest.views.queries.ingest_status", down)
    response = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {alpha[1]}")
    assert "ch.internal" not in json_error(response, 503, reason)["message"]


def test_a_reason_error_outside_the_api_stays_a_500_page(raising_client, db, monkeypatch):
    def refuse():
        raise IngestError("nope", "not an API path")

    monkeypatch.setattr("latency_obs.views.get_writer", refuse)
    response = raising_client.get("/healthz")
    assert response.status_code == 500 and response["Content-Type"].startswith("text/html")
