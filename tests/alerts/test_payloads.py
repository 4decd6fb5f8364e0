"""Slack Block Kit structure and escaping; the JSON body and its signature; Retry-After parsing."""
import hashlib
import hmac
import json
from datetime import datetime, timezone

from alerts.delivery import backoff_delay, parse_retry_after
from alerts.payloads import json_body, signature, slack_message

SUMMARY = {
    "title": "chat-gateway p95 TTFT above 2 s",
    "verdict": "queue_backlog",
    "numbers": {"p95 TTFT": "2.4 s", "requests": 1830, "worst tenant": "<script>alert(1)</script> & co"},
    "url": "https://lo.example.com/projects/alpha/diagnosis?service=chat-gateway&start=1&end=2",
    "context": "project alpha · tenant <!channel> & friends · 10:00–10:15 UTC",
}


def test_slack_message_has_header_verdict_numbers_button_and_context():
    msg = slack_message(SUMMARY)
    assert [b["type"] for b in msg["blocks"]] == ["header", "section", "actions", "context"]
    header, section, actions, context = msg["blocks"]
    assert header["text"] == {"type": "plain_text", "text": SUMMARY["title"], "emoji": True}
    assert section["text"]["text"] == "*Verdict:* `queue_backlog`"
    assert [f["text"] for f in section["fields"]][:2] == ["*p95 TTFT*\n2.4 s", "*requests*\n1830"]
    button = actions["elements"][0]
    assert button["type"] == "button" and button["text"]["text"] == "Open diagnosis"
    assert button["url"] == SUMMARY["url"]
    assert "queue_backlog" in msg["text"]


def test_slack_message_shows_value_and_threshold_in_their_unit():
    fields = lambda summary: [f["text"] for f in slack_message(summary)["blocks"][1]["fields"]]  # noqa: E731
    numbers = {"value": 25692.644, "threshold": 2000.0, "requests": 12}
    assert fields({"title": "t", "numbers": numbers, "unit": "ms"}) == [
        "*value*\n25.7 s", "*threshold*\n2 s", "*requests*\n12"]
    assert fields({"title": "t", "numbers": {"value": 0.75, "threshold": 0.5}, "unit": "%"}) == [
        "*value*\n75%", "*threshold*\n50%"]
    assert fields({"title": "t", "numbers": {"value": 2.583e-05}, "unit": "per run"}) == ["*value*\n0 per run"]
    assert fields({"title": "t", "numbers": {"value": "queue_backlog"}, "unit": ""}) == ["*value*\nqueue_backlog"]


def test_slack_message_escapes_user_strings():
    msg = slack_message(SUMMARY)
    tenant = msg["blocks"][1]["fields"][2]["text"]
    assert tenant == "*worst tenant*\n&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"
    context = msg["blocks"][3]["elements"][0]["text"]
    assert "&lt;!channel&gt; &amp; friends" in context and "<" not in context


def test_slack_message_without_optional_parts():
    msg = slack_message({"title": "weekly review"})
    assert [b["type"] for b in msg["blocks"]] == ["header", "section"]


def test_json_body_is_stable_and_signature_is_hmac_over_timestamp_and_body():
    body = json_body("alert.firing", {"b": 1, "a": [1, 2]}, "3f0c9d4e-8a8b-4a52-9d0e-2c7b1f6e5a10")
    assert body == (b'{"data":{"a":[1,2],"b":1},"event":"alert.firing",'
                    b'"id":"3f0c9d4e-8a8b-4a52-9d0e-2c7b1f6e5a10"}')  # the delivery id is signed with the rest
    expected = hmac.new(b"s3cret", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert signature("s3cret", body, 1700000000) == "sha256=" + expected
    assert json.loads(body)["event"] == "alert.firing"


def test_retry_after_seconds_http_date_and_garbage():
    now = datetime(2026, 1, 5, 10, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("1") == 1.0
    assert parse_retry_after(" 120 ") == 120.0
    assert parse_retry_after("86400") == 300.0  # capped
    assert parse_retry_after("Mon, 05 Jan 2026 10:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Mon, 05 Jan 2026 09:00:00 GMT", now=now) == 0.0  # in the past: now
    assert parse_retry_after("Tue, 06 Jan 2026 10:00:00 GMT", now=now) == 300.0
    for garbage in (None, "", "soon", "-5", "1.5e3", "Mon, 99 Foo"):
        assert parse_retry_after(garbage, now=now) is None


def test_backoff_grows_exponentially_with_jitter_and_a_cap(settings):
    settings.WEBHOOK_BACKOFF_BASE_MS = 2000
    for attempt, full in ((1, 2.0), (2, 4.0), (3, 8.0), (20, 300.0)):
        assert full / 2 <= backoff_delay(attempt) <= full
