"""Every answer says how long Django took and how much CPU its thread used (Server-Timing), what bench-live reads."""
import re

TIMING = re.compile(r"^app;dur=(\d+\.\d), cpu;dur=(\d+\.\d)$")


def test_page_answer_has_its_server_time(client, db):
    response = client.get("/login/")
    app_ms, cpu_ms = map(float, TIMING.match(response["Server-Timing"]).groups())
    # a thread cannot use more CPU than the wall time it ran (rounding to 0.1 ms aside)
    assert 0 < app_ms and 0 <= cpu_ms <= app_ms + 0.1


def test_error_answers_have_it_too(client, db):
    assert TIMING.match(client.get("/no-such-page/")["Server-Timing"])
    assert TIMING.match(client.get("/api/v1/ingest/status")["Server-Timing"])
