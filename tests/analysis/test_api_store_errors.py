"""GET /api/v1/diagnosis when the store does not answer: 503 JSON, never a 500 page."""

from store.client import ClickHouseError
from tests.store.test_query_timeout import HEAVY

URL = "/api/v1/diagnosis"
WINDOW = {"service": "chat", "start": "2026-01-05T10:00:00Z", "end": "2026-01-05T10:20:00Z"}


def test_read_past_the_timeout_answers_503_query_timeout(client, alpha, clickhouse, settings, monkeypatch):
    settings.CLICKHOUSE_QUERY_TIMEOUT_SECONDS = 1
    # the diagnosis' first read (bucket_distribution) is swapped for a real heavy one; client and view are real
    monkeypatch.setattr("analysis.reads.queries._sql", lambda name: HEAVY)
    response = client.get(URL, WINDOW, headers={"Authorization": f"Bearer {alpha[1]}"})
    assert (response.status_code, response.json()["error"]) == (503, "query_timeout")
    assert "longer than 1 s" in response.json()["message"]


def test_other_store_failure_answers_503_store_error(client, alpha, monkeypatch):
    def down(*args, **kwargs):
        raise ClickHouseError("unavailable", "cannot reach ClickHouse at ch.internal: connection refused")

    monkeypatch.setattr("analysis.diagnosis.service.collect", down)
    response = client.get(URL, WINDOW, headers={"Authorization": f"Bearer {alpha[1]}"})
    assert (response.status_code, response.json()["error"]) == (503, "store_error")
    assert "ch.internal" not in response.json()["message"]  # details go to the log, not to the caller
