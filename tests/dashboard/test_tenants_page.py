"""The Tenants page: per-tenant tails worked out by hand from factory spans, the noisy-neighbour evidence and
findings the diagnosis itself computes, sortable markup, hostile tenant names as text, membership."""
import re
from html import unescape
from urllib.parse import parse_qs

import pytest

from dashboard import charts
from tests import factories as f
from tests.dashboard.conftest import BETA_SECRET, HOSTILE_ROUTE, HOSTILE_TENANT, WINDOW
from tests.dashboard.pages import at, by_header, spec, table

URL = "/tenants/"
SECOND = 1000 * f.MS


@pytest.fixture
def tails(send):
    """acme: t_first_token 100, 200, 300; zeta: 1000 (t_queue 20 each), 10 s apart: never two in flight."""
    send(*[at(10 * i, tenant="acme", t_first_token_ms=ms) for i, ms in enumerate((100, 200, 300))],
         at(30, tenant="zeta", t_first_token_ms=1000))


@pytest.fixture
def noisy(send):
    """The hostile tenant holds the slot [0, 1000 ms) while "calm" (queued at 100 ms) waits 500 ms for it."""
    send(at(0, tenant=HOSTILE_TENANT, t_queue_ms=0, t_first_token_ms=500, t_stream_ms=400, t_post_ms=100),
         at(0.1, tenant="calm", t_queue_ms=500, t_first_token_ms=100, t_stream_ms=100, t_post_ms=0))


def test_tails_per_tenant_are_exact_and_the_table_sorts(tails, ann_client):
    html = ann_client.get(URL, WINDOW).content.decode()
    parsed = table(html, "tenants")
    assert parsed.table_class == "sortable"
    assert parsed.headers[:9] == ["tenant", "requests", "share of requests", "TTFT p95", "TTFT p99", "total p95",
                                  "total p99", "t_queue p95", "TTFT p95 ÷ service"]
    assert parsed.sorts[:9] == ["text"] + ["number"] * 8
    acme, zeta = by_header(parsed)
    # acme TTFT 120, 220, 320: p95 at rank 1.9 -> 310, p99 318; total = TTFT + 915: 1225, 1233.
    # Service TTFT 120, 220, 320, 1020: p95 at rank 2.85 -> 320 + 0.85 x 700 = 915; total p95 1830.
    assert acme["tenant"] == "acme" and zeta["tenant"] == "zeta"
    assert {k: float(v) for k, v in acme.items() if k not in ("tenant", "findings")} == pytest.approx({
        "requests": 3, "share of requests": 75.0, "TTFT p95": 310, "TTFT p99": 318, "total p95": 1225,
        "total p99": 1233, "t_queue p95": 20, "TTFT p95 ÷ service": 310 / 915})
    assert float(zeta["TTFT p95 ÷ service"]) == pytest.approx(1020 / 915)
    assert float(zeta["share of requests"]) == 25.0
    assert "915 ms" in html and "1,830 ms" in html
    # No two attempts in flight at once: nobody held a slot while another queued.
    assert table(html, "noisy").rows == []
    assert "had a queue in this window" in html


def test_chart_groups_tenant_p95s_against_the_service(tails, ann_client):
    data = spec(ann_client.get(URL, WINDOW).content.decode(), "tenant-tails")["data"]
    assert [t["name"] for t in data] == ["tenant TTFT p95", "tenant total p95", "service TTFT p95", "service total p95"]
    assert all(t["x"] == ["acme", "zeta"] for t in data)
    assert data[0]["y"] == pytest.approx([310, 1020]) and data[1]["y"] == pytest.approx([1225, 1935])
    assert data[2]["y"] == pytest.approx([915, 915]) and data[3]["y"] == pytest.approx([1830, 1830])


def test_tenant_links_keep_the_filters(tails, ann_client):
    html = ann_client.get(URL, WINDOW).content.decode()
    hrefs = re.findall(r'href="(/[a-z/]*)\?([^"]*tenant=zeta[^"]*)"', html)
    links = [(path, parse_qs(unescape(query))) for path, query in hrefs]
    expected = {"project": ["alpha"], "service": ["alpha-svc"], "tenant": ["zeta"],
                "start": [WINDOW["start"]], "end": [WINDOW["end"]]}
    assert links == [("/runs/", expected), ("/", expected)]


def test_outlier_thresholds_come_from_settings(tails, ann_client, settings):
    settings.ANALYSIS_THRESHOLDS = {"tenant_min_count": 1, "tenant_outlier_ratio": 1.1}
    html = ann_client.get(URL, WINDOW).content.decode()
    _, zeta = by_header(table(html, "tenants"))
    assert zeta["findings"] == "tenant_outlier"
    assert "tenant zeta: TTFT p95 1.02 s is ×1.11 the service&#x27;s 915 ms" in html
    settings.ANALYSIS_THRESHOLDS = {}
    html = ann_client.get(URL, WINDOW).content.decode()
    assert 'id="findings"' not in html and "tenant_outlier" not in by_header(table(html, "tenants"))[1]["findings"]


def test_noisy_neighbour_evidence_and_finding(noisy, ann_client):
    html = ann_client.get(URL, WINDOW).content.decode()
    parsed = table(html, "noisy")
    assert parsed.table_class == "sortable"
    hog, calm = parsed.rows
    # Backlog [100, 600) ms while the hostile tenant held the only busy slot: 100 % of it, with 50 % of arrivals;
    # the others' t_queue p95 is calm's 500 ms wait, calm's others' (the hog's) 0 ms.
    assert hog[0][1] == HOSTILE_TENANT and calm[0][1] == "calm"
    assert [float(v) for v, _ in hog[1:5]] == pytest.approx([1.0, 0.5, 2.0, 500])
    assert hog[5][1] == "noisy_neighbour"
    assert [float(v) for v, _ in calm[1:5]] == pytest.approx([0.0, 0.5, 0.0, 0])
    message = f"tenant {HOSTILE_TENANT} held 100% of busy slots during backlog with 50% of arrivals; " \
              "other tenants' t_queue p95 500 ms"
    findings = re.search(r'<ul class="warning" id="findings">(.*?)</ul>', html, re.S).group(1)
    assert message in unescape(findings)
    slots = spec(html, "slot-shares")["data"]
    assert slots[0]["x"] == [charts.text(HOSTILE_TENANT), "calm"]
    assert slots[0]["y"] == [100.0, 0.0] and slots[1]["y"] == [50.0, 50.0] and slots[2]["y"] == [50.0, 50.0]


def test_long_windows_sweep_on_request_only(noisy, ann_client):
    day = {"start": "2026-01-05T00:00:00Z", "end": "2026-01-06T00:00:00Z"}
    html = ann_client.get(URL, day).content.decode()
    assert 'id="noisy-skipped"' in html and 'id="noisy"' not in html and 'id="findings"' not in html
    link = re.search(r'<p class="empty" id="noisy-skipped">.*?href="\?([^"]*)"', html, re.S).group(1)
    assert parse_qs(unescape(link))["noisy"] == ["1"]
    html = ann_client.get(URL, {**day, "noisy": "1"}).content.decode()
    assert [r[0][1] for r in table(html, "noisy").rows] == [HOSTILE_TENANT, "calm"] and 'id="findings"' in html


def test_hostile_tenant_and_route_render_as_text(traffic, ann_client):
    html = ann_client.get(URL, WINDOW).content.decode()
    assert HOSTILE_TENANT not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;tenant&quot;)&lt;/script&gt;" in html
    assert charts.text(HOSTILE_TENANT) in spec(html, "tenant-tails")["data"][0]["x"]
    filtered = ann_client.get(URL, {**WINDOW, "route": HOSTILE_ROUTE, "tenant": HOSTILE_TENANT}).content.decode()
    assert HOSTILE_TENANT not in filtered and HOSTILE_ROUTE not in filtered
    # The route filter keeps the hostile tenant's 20 attempts; the tenant filter only marks its row.
    [row] = by_header(table(filtered, "tenants"))
    assert row["tenant"] == HOSTILE_TENANT and row["requests"] == "20"
    assert "▶" in table(filtered, "tenants").rows[0][0][1]


def test_members_only(traffic, client, members):
    assert client.get(URL, WINDOW).url.startswith("/login/")
    client.force_login(members["ben"][0])
    assert client.get(URL, {**WINDOW, "project": "alpha"}).status_code == 404
    html = client.get(URL, WINDOW).content.decode()
    assert [r["tenant"] for r in by_header(table(html, "tenants"))] == [BETA_SECRET]
    assert "acme" not in html and "alert(" not in html


def test_alpha_never_shows_beta_tenants(traffic, ann_client):
    html = ann_client.get(URL, WINDOW).content.decode()
    assert sorted(r["tenant"] for r in by_header(table(html, "tenants"))) == sorted(["acme", HOSTILE_TENANT])
    assert BETA_SECRET not in html


def test_empty_window_shows_the_empty_state(traffic, ann_client):
    response = ann_client.get(URL, {"start": "2025-01-05T09:00:00Z", "end": "2025-01-05T10:00:00Z"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="empty-state"' in html and 'id="tenants"' not in html
