"""manage.py diagnose: the same diagnosis as the API, as JSON or a readable summary; errors as CommandError."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.analysis import evidence_samples as samples

WINDOW = ["--service", "chat", "--start", "2026-01-05T10:00:00Z", "--end", "2026-01-05T10:20:00Z"]


@pytest.fixture
def calls(monkeypatch, clickhouse):
    """collect() faked; the coverage is read for real, from the migrated, emptied store (not one that another test
    happened to migrate first)."""
    seen = []

    def fake_collect(scope):
        seen.append((scope.project_id, scope.service, scope.route, scope.tenant))
        return samples.noisy_tenant() if scope.service == "chat" else samples.no_requests()

    monkeypatch.setattr("analysis.diagnosis.service.collect", fake_collect)
    return seen


def run(*args) -> str:
    out = StringIO()
    call_command("diagnose", *args, stdout=out)
    return out.getvalue()


def test_json_output_is_the_api_shape(alpha, calls):
    body = json.loads(run("--project", "alpha", *WINDOW, "--route", "/v1/chat", "--tenant", "acme", "--format", "json"))
    assert set(body) == {"verdict", "findings", "path", "missing", "sample", "recommendations", "layers", "evidence",
                         "coverage"}
    assert body["verdict"] == "queue_backlog"
    assert calls == [(alpha[0].pk, "chat", "/v1/chat", "acme")]


def test_text_output_lists_verdict_path_findings_and_fixes(alpha, calls):
    text = run("--project", "alpha", *WINDOW, "--format", "text")
    assert text.startswith("verdict: queue_backlog")
    # t_queue p95 2900 ms vs 1000 -> yes; gap_fraction 0.02 vs 0.5 -> no
    assert "Is queue wait high (t_queue p95, ms)? t_queue p95 2.9 s is above 1 s → yes" in text
    assert "gap_fraction 2% is below 50% → no" in text
    assert "tenant noisy held 63% of busy slots during backlog" in text
    assert "Per tenant quotas" in text


def test_unknown_project_is_an_error(db, calls):
    with pytest.raises(CommandError, match="no project named 'nope'"):
        run("--project", "nope", *WINDOW)


def test_unknown_service_is_an_error(alpha, calls):
    with pytest.raises(CommandError, match="unknown_service"):
        run("--project", "alpha", "--service", "other", *WINDOW[2:])


def test_bad_date_is_an_error(alpha, calls):
    with pytest.raises(CommandError, match="bad_date: 'start' is not an ISO 8601 instant"):
        run("--project", "alpha", "--service", "chat", "--start", "soon", "--end", "2026-01-05T10:20:00Z")


def test_window_too_large_is_an_error(alpha, calls):
    with pytest.raises(CommandError, match="window_too_large"):
        run("--project", "alpha", "--service", "chat", "--start", "2025-01-01", "--end", "2026-01-01")
    assert calls == []
