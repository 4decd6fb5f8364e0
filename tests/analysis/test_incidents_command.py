"""manage.py incidents: the API's document as JSON, or one readable block per incident; errors as CommandError."""
import json
from datetime import datetime, timedelta, timezone
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from tests import factories as f

WINDOW = ["--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T12:00:00Z"]


def run(*args) -> str:
    out = StringIO()
    call_command("incidents", *args, stdout=out)
    return out.getvalue()


@pytest.fixture(autouse=True)
def _store(clickhouse):
    """The command reads the span store (what is judged, whether the service exists)."""


@pytest.fixture
def stored(alpha):
    return {"closed": f.incident(alpha[0], "chat", start=f.BASE),
            "open": f.incident(alpha[0], "chat", start=f.BASE + timedelta(hours=1), open_=True,
                               scope=[{"dimension": "tenant", "value": "acme", "share": 0.91}])}


@override_settings(PUBLIC_BASE_URL="https://lo.example.com/")
def test_json_is_the_api_document(alpha, stored):
    body = json.loads(run("--service", "chat", *WINDOW, "--format", "json"))
    assert set(body) == {"service", "start", "end", "incidents", "judged_until", "pending", "no_baseline"}
    assert [i["id"] for i in body["incidents"]] == [stored["closed"].pk, stored["open"].pk]
    assert body["incidents"][1]["end"] is None
    assert body["incidents"][0]["url"] == f"https://lo.example.com/incidents/{stored['closed'].pk}/?project=alpha"


def test_text_has_one_block_per_incident(alpha, stored):
    text = run("--project", "alpha", "--service", "chat", *WINDOW)
    assert text.startswith("chat: 2 incident(s) overlapping 2026-01-05T09:00:00Z – 2026-01-05T12:00:00Z")
    assert f"#{stored['closed'].pk} 2026-01-05T10:00:00Z → 2026-01-05T10:20:00Z (20 min)" in text
    assert f"#{stored['open'].pk} 2026-01-05T11:00:00Z → ongoing (" in text and "(ongoing)" in text
    assert "causes:   queue_backlog 82%, network_overhead 11%" in text
    assert "scope:    service-wide" in text and "scope:    tenant=acme 91%" in text
    # TTFT 33.3 s peak against a 250 ms baseline: 133.2 times, rounded
    assert "peak:     TTFT p95 33.3 s vs 250 ms ×133" in text


def test_default_window_is_the_last_24_hours(alpha):
    now = datetime.now(timezone.utc)
    recent = f.incident(alpha[0], "chat", start=now - timedelta(hours=2))
    f.incident(alpha[0], "chat", start=now - timedelta(hours=30))
    body = json.loads(run("--service", "chat", "--format", "json"))
    assert [i["id"] for i in body["incidents"]] == [recent.pk]


def test_several_projects_need_a_name(alpha, beta):
    with pytest.raises(CommandError, match="name the project with --project"):
        run("--service", "chat")
    with pytest.raises(CommandError, match="no project named 'nope'"):
        run("--project", "nope", "--service", "chat")


def test_bad_input_is_a_clear_error(alpha, stored):
    with pytest.raises(CommandError, match="bad_date: 'start' is not an ISO 8601 instant"):
        run("--service", "chat", "--start", "soon")
    with pytest.raises(CommandError, match="bad_date: 'end' must be after 'start'"):
        run("--service", "chat", "--start", "2026-01-05T12:00:00Z", "--end", "2026-01-05T09:00:00Z")
    with pytest.raises(CommandError, match="missing_parameter"):
        run("--service", "", *WINDOW)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("incidents", "--service", "chat", "--start", "2024-01-01", "--format", "json", stdout=out)
    assert json.loads(out.getvalue())["error"] == "window_too_large"


def test_an_unknown_service_is_an_error_naming_the_closest(alpha, ingest):
    ingest(alpha[1], f.request(f.attempt(), service="chat-gateway"))
    with pytest.raises(CommandError, match="unknown_service: no service 'chat-gatewya'.*'chat-gateway'"):
        run("--service", "chat-gatewya", *WINDOW)


def test_minutes_not_judged_yet_are_said_not_none(alpha, ingest):
    ingest(alpha[1], f.request(f.attempt(), service="chat"))
    text = run("--service", "chat", *WINDOW)
    assert "chat: 0 incident(s)" in text and "not judged yet after 10:00 UTC: 1 minute(s) with traffic pending" in text
    assert "none:" not in text
