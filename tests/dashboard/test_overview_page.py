"""The Overview page: exact numbers from stored factory attempts, filters in the URL, empty states."""
import html
import re

import pytest
from django.contrib.auth.models import User

from analysis.models import WindowDiagnosis
from tests.dashboard.conftest import END, HOSTILE_ROUTE, HOSTILE_TENANT, START, WINDOW
from tests.dashboard.pages import chart, trace

pytestmark = pytest.mark.django_db


def test_overview_shows_exact_bucket_percentiles_per_route(ann_client, traffic):
    response = ann_client.get("/", {"project": "alpha", **WINDOW})
    assert response.status_code == 200
    stack = chart(response, "stack-p50")
    queue = trace(stack, "t_queue")
    # even i: acme on /v1/chat/completions, t_queue 10, 12 .. 48 (p50 29); odd i: the hostile route, 11 .. 49 (p50 30)
    by_route = dict(zip(queue["x"], queue["y"]))
    assert by_route == {"/v1/chat/completions": 29.0, html.escape(HOSTILE_ROUTE, quote=False): 30.0}
    assert trace(stack, "t_first_token")["y"] == [300.0, 300.0]
    body = response.content.decode()
    assert "<b>40</b>" in body  # requests in the window
    assert "alpha-svc" in body and "beta-svc" not in body


def test_overview_series_and_filters(ann_client, traffic):
    response = ann_client.get("/", {"project": "alpha", "tenant": "acme", **WINDOW})
    ttft = chart(response, "ttft")
    p50 = trace(ttft, "ttft p50")
    # acme's 20 attempts: ttft = t_queue + 300 = 310, 312 .. 348; each point is the median of its bucket
    values = [y for y in p50["y"] if y is not None]
    assert values and all(310 <= y <= 348 for y in values)
    rate = chart(response, "rate")
    seconds = 60  # the bucket width series_width_ms picks for a 65-minute window
    assert round(sum(trace(rate, "requests/s")["y"]) * seconds) == 20
    # the tenant filter is kept in every navigation link
    assert 'href="/scheduler/?project=alpha&amp;service=alpha-svc&amp;tenant=acme&amp;start=' in response.content.decode()


def test_hostile_strings_render_as_text(ann_client, traffic):
    body = ann_client.get("/", {"project": "alpha", **WINDOW}).content.decode()
    assert HOSTILE_ROUTE not in body and "<img src=x" not in body
    assert html.escape(HOSTILE_ROUTE) in body  # in the route picker, as text
    assert HOSTILE_TENANT not in body


def test_current_verdict_per_service_links_to_its_diagnosis(ann_client, traffic):
    stored = WindowDiagnosis.objects.create(project=traffic["alpha"], service="alpha-svc", start=START, end=END,
                                            verdict="queue_backlog", result={"verdict": "queue_backlog", "path": []})
    body = ann_client.get("/", {"project": "alpha", **WINDOW}).content.decode()
    assert f"window={stored.pk}" in body and ">queue_backlog</a>" in body


def test_window_without_traffic_shows_how_to_send_spans_and_the_latest_data(ann_client, traffic):
    response = ann_client.get("/", {"project": "alpha", "start": "2026-02-01T00:00:00Z", "end": "2026-02-01T01:00:00Z"})
    body = response.content.decode()
    assert 'id="empty-state"' in body
    assert "http://testserver/v1/traces" in body and "Authorization=Bearer" in body
    assert "2026-01-05" in body  # the latest request, with a link to the hour up to it
    assert "start=2026-01-05T" in body


def test_bad_window_falls_back_to_the_default_range_with_a_warning(ann_client, traffic):
    response = ann_client.get("/", {"project": "alpha", "start": "yesterday", "end": "2026-01-05T11:00:00Z"})
    assert response.status_code == 200
    assert "is not an ISO 8601 instant" in response.content.decode()
    response = ann_client.get("/", {"project": "alpha", "range": "99y"})
    assert "unknown range" in response.content.decode()


def test_a_user_without_project_is_told_how_to_get_one(client, db):
    client.force_login(User.objects.create_user("loner", password="x"))
    body = client.get("/").content.decode()
    assert 'id="no-project"' in body and "create_api_key" in body


def test_plotly_is_served_from_our_own_static_files(ann_client, traffic):
    body = ann_client.get("/", {"project": "alpha", **WINDOW}).content.decode()
    assert '<script src="/static/vendor/plotly.min.js">' in body
    # every script and stylesheet comes from our own origin (a bare "cdn" search matched random CSRF tokens)
    sources = re.findall(r'<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"', body)
    assert sources and all(src.startswith(("/", "data:")) and not src.startswith("//") for src in sources), sources


def test_the_pickers_and_coverage_are_read_beside_the_views_reads_once(ann_client, traffic, monkeypatch):
    """read_ahead: the route picker and the coverage strip are read on the reader threads while the view reads,
    each once, and the page draws what they read; an error there is the page's store error (503)."""
    import threading

    from analysis.reads import coverage, lookups
    from store.errors import ClickHouseError
    seen = []

    def recorded(name, read):
        def call(*args, **kwargs):
            seen.append((name, threading.current_thread().name))
            return read(*args, **kwargs)
        return call
    monkeypatch.setattr(lookups, "route_choices", recorded("routes", lookups.route_choices))
    monkeypatch.setattr(coverage, "coverage", recorded("coverage", coverage.coverage))
    body = ann_client.get("/", {"project": "alpha", **WINDOW}).content.decode()
    assert sorted(name for name, _ in seen) == ["coverage", "routes"]
    assert all(thread.startswith("store-read") for _, thread in seen), seen
    assert '<option value="/v1/chat/completions"' in body and 'id="coverage"' in body

    def broken(*args, **kwargs):
        raise ClickHouseError("query_failed", "the store went away")
    monkeypatch.setattr(lookups, "route_choices", broken)
    assert ann_client.get("/", {"project": "alpha", **WINDOW}).status_code == 503


def test_a_read_ahead_is_read_again_for_filters_the_view_changed(traffic, monkeypatch):
    """read_ahead reads with the request's filters; a view that changes page.filters afterwards gets its picker
    read again with the new ones, and one that does not gets the answer read ahead, without a second read."""
    from dataclasses import replace

    from django.test import RequestFactory

    from analysis.reads import lookups
    from dashboard import filters
    from dashboard.access import Page, read_ahead
    calls = []
    real = lookups.route_choices
    monkeypatch.setattr(lookups, "route_choices", lambda *args, **kwargs: calls.append(args[0].service) or real(*args, **kwargs))
    request = RequestFactory().get("/", WINDOW)

    def page(service):
        return Page(request, traffic["alpha"], [], lookups.Choices(values=[], matching=0),
                    filters.from_request(request, "alpha", service))
    unchanged = page("alpha-svc")
    with read_ahead(unchanged, ("routes",)):
        assert "/v1/chat/completions" in [v["value"] for v in unchanged.routes.values]
    assert calls == ["alpha-svc"]
    changed = page("search")  # a service without traffic: no routes
    with read_ahead(changed, ("routes",)):
        changed.filters = replace(changed.filters, service="alpha-svc")
        assert "/v1/chat/completions" in [v["value"] for v in changed.routes.values]
    assert sorted(calls) == ["alpha-svc", "alpha-svc", "search"]  # the read ahead ran beside, in any order
