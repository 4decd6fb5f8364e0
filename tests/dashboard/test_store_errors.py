"""Every dashboard page goes through dashboard.access.page: a read the store did not answer is an error box, 503."""
from analysis.reads import lookups
from store.client import ClickHouseError
from tests.store.test_query_timeout import HEAVY


def test_page_whose_read_times_out_shows_the_error_box(ann, settings, monkeypatch):
    from store import client

    settings.CLICKHOUSE_QUERY_TIMEOUT_SECONDS = 1
    # the services read that every page makes first, swapped for a real heavy one
    monkeypatch.setattr("dashboard.access.lookups.service_choices", lambda *args, **kwargs: client.query(HEAVY))
    response = ann.get("/", {"project": "alpha", "range": "7d"})
    assert response.status_code == 503
    body = response.content.decode()
    assert 'id="store-error"' in body and "longer than 1 seconds" in body
    assert "?project=alpha&amp;range=1h" in body  # the way out: a shorter window


def test_read_inside_a_view_that_fails_shows_the_error_box(ann, monkeypatch):
    def down(*args, **kwargs):
        raise ClickHouseError("unavailable", "cannot reach ClickHouse at ch.internal: connection refused")

    monkeypatch.setattr("dashboard.access.lookups.service_choices",
                        lambda *args, **kwargs: lookups.Choices(values=[{"value": "svc", "requests": 1}], matching=1))
    monkeypatch.setattr("analysis.reads.runs.search", down)  # the runs page's own read
    response = ann.get("/runs/", {"project": "alpha"})
    assert response.status_code == 503
    body = response.content.decode()
    assert "The span store did not answer" in body and "ch.internal" not in body


def test_dashboard_window_is_capped_like_the_api(ann, settings):
    settings.ANALYSIS_MAX_WINDOW_DAYS = 3
    response = ann.get("/keys/", {"project": "alpha", "start": "2026-01-01T00:00:00Z", "end": "2026-01-05T00:00:00Z"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "the window may span at most 3 days" in body  # and the page shows the default range instead
    assert 'name="start"' not in body
