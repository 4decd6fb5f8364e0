"""The Connections page on hand-built minutes with known new connections and TTFT: the per-minute scatter,
the Spearman correlations the diagnosis reads, the filters and empty states, and who may see it."""
from datetime import timedelta

import pytest

from analysis.rollups.materialize import materialize
from tests import factories as f
from tests.dashboard.pages import spec, text_of

SVC = "churn-svc"
WINDOW = {"project": "alpha", "service": SVC, "start": "2026-01-05T10:00:00Z", "end": "2026-01-05T10:10:00Z"}
HOSTILE = '<script>alert("route")</script>'


@pytest.fixture
def minutes(members, ingest):
    """Minutes 0-3 from BASE: 10 successful attempts each, of which 0, 1, 2, 3 on a new connection; reused ones
    have TTFT 320 ms (t_queue 20 + 300), new ones 1320 ms. Minute 4: 5 attempts, all new, TTFT 320 ms: too few
    successes to be correlated (it would break the rank order if it were)."""
    _, alpha, key = members["ann"]

    def one(minute, i, new, first_token=None):
        return f.attempt(t_first_token_ms=first_token or (1300 if new else 300), reused=not new,
                         start_ns=f.BASE_NS + (minute * 60 + i) * 1000 * f.MS, route=HOSTILE)
    spans = [one(m, i, new=i < m) for m in range(4) for i in range(10)]
    spans += [one(4, i, new=True, first_token=300) for i in range(5)]
    ingest(key, f.request(*spans, service=SVC))
    materialize(alpha.pk, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=1))
    return alpha


def test_correlations_and_totals_match_the_diagnosis(minutes, ann_client):
    html = ann_client.get("/connections/", WINDOW).content.decode()
    # (0 + 1 + 2 + 3 + 5) new connections over 45 successes
    assert text_of(html, "per-success") == "0.244"
    # TTFT p95 per kept minute: 320; 9 x 320 + 1320 -> 320 + 0.55 x 1000 = 870; 1320; 1320. Ranks of x 1 2 3 4,
    # of y 1 2 3.5 3.5 -> r = 4.5 / sqrt(5 x 4.5) = 0.949; the stddevs rise with x -> 1
    assert text_of(html, "rho-p95") == "0.95"
    assert text_of(html, "rho-stddev") == "1.00"
    assert text_of(html, "windows") == "4 of 5"
    # slope of (0, 320) (.1, 870) (.2, 1320) (.3, 1320): 172.5 / 0.05
    assert "slope: 3450 ms of TTFT p95" in html


def test_scatter_points_are_the_kept_minutes(minutes, ann_client):
    html = ann_client.get("/connections/", WINDOW).content.decode()
    p95 = spec(html, "churn-p95")
    assert p95["layout"]["title"]["text"] == "TTFT p95 per minute · Spearman ρ = 0.95"
    points, fit = p95["data"]
    assert points["x"] == [0, 0.1, 0.2, 0.3]
    assert points["y"] == [320, 870, 1320, 1320]
    assert points["customdata"][1] == ["2026-01-05 10:01", 10, 1]
    # the fit through the means (0.15, 957.5) with slope 3450, across x 0 .. 0.3
    assert fit["x"] == [0, 0.3] and fit["y"] == pytest.approx([440, 1475])
    stddev = spec(html, "churn-stddev")
    assert stddev["layout"]["title"]["text"].endswith("Spearman ρ = 1.00")
    # sample stddevs: sqrt(900000 / 9), sqrt(1.6e6 / 9), sqrt(2.1e6 / 9)
    assert stddev["data"][0]["y"] == [0, 316.2, 421.6, 483.0]
    # the time series keeps every minute, minute 4 included (5 new for 5 successes)
    series = {t["name"]: t["y"] for t in spec(html, "churn-series")["data"]}
    assert series["new connections per success"] == [0, 0.1, 0.2, 0.3, 1]
    assert series["TTFT p95 (ms)"] == [320, 870, 1320, 1320, 320]


def test_filters_apply_and_are_escaped(minutes, ann_client):
    html = ann_client.get("/connections/", {**WINDOW, "route": HOSTILE}).content.decode()
    assert text_of(html, "rho-p95") == "0.95"
    assert HOSTILE not in html and "&lt;script&gt;alert(&quot;route&quot;)" in html
    other = ann_client.get("/connections/", {**WINDOW, "route": "/other"}).content.decode()
    assert 'id="no-attempts"' in other and 'id="churn-p95"' not in other


def test_too_few_successes_and_empty_window(minutes, ann_client):
    only_minute_4 = {**WINDOW, "start": "2026-01-05T10:04:00Z", "end": "2026-01-05T10:05:00Z"}
    html = ann_client.get("/connections/", only_minute_4).content.decode()
    assert 'id="no-windows"' in html and 'id="churn-p95"' not in html
    assert text_of(html, "per-success") == "1.000" and text_of(html, "rho-p95") == "–"
    empty = ann_client.get("/connections/", {**WINDOW, "start": "2026-01-04T10:00:00Z", "end": "2026-01-04T11:00:00Z"})
    assert empty.status_code == 200 and 'id="empty-state"' in empty.content.decode()


def test_membership(traffic, members, client):
    client.force_login(members["ben"][0])
    window = {"start": "2026-01-05T09:55:00Z", "end": "2026-01-05T11:00:00Z"}
    assert client.get("/connections/", {"project": "alpha", **window}).status_code == 404
    own = client.get("/connections/", window).content.decode()
    assert "beta-svc" in own and "alpha-svc" not in own and text_of(own, "per-success") == "0.000"
    client.logout()
    r = client.get("/connections/", {"project": "alpha", **window})
    assert r.status_code == 302 and r["Location"].startswith("/login/")
