"""The Prompt length page: bucket percentiles per input-token segment worked out by hand from factory spans,
the diagnosis' prefill ratio and its configured threshold, chart specs, hostile strings as text, membership."""
import pytest

from tests.dashboard.conftest import BETA_SECRET, HOSTILE_ROUTE, HOSTILE_TENANT, WINDOW
from tests.dashboard.pages import at, spec, table

URL = "/prompts/"


def prompt(seconds, tokens, t_first_token_ms, tenant="alice"):
    return at(seconds, tenant=tenant, t_first_token_ms=t_first_token_ms,
              attributes={"gen_ai.usage.input_tokens": tokens})


@pytest.fixture
def prompts(send):
    """TTFT = 20 (t_queue) + t_first_token; total = TTFT + 915. No input_tokens: the "unknown" segment."""
    send(prompt(0, 500, 300), prompt(10, 2000, 500), prompt(20, 3000, 600), prompt(30, 20000, 1000),
         prompt(40, None, 700), prompt(50, 5000, 2000, tenant="other"))


def lines(html: str) -> dict:
    """The segments table (segments as columns) as {"segments": [...], row name: [data-value or text, ...]}."""
    parsed = table(html, "segments")
    out = {"segments": parsed.headers[1:]}
    out.update({name: [v if v is not None else t for v, t in cells] for (_, name), *cells in parsed.rows})
    return out


def test_segments_table_is_exact(prompts, ann_client):
    html = ann_client.get(URL, WINDOW).content.decode()
    got = lines(html)
    # Prompt-length order, attempts without input_tokens last; every bucket's p50 and p95.
    assert got["segments"] == ["<1k", "1-4k", "4-16k", ">16k", "unknown"]
    assert list(got)[1:4] == ["requests", "in the prefill ratio", "t_queue p50"] and len(got) == 1 + 2 + 16
    assert list(got)[-1] == "total p95"
    assert got["requests"] == ["1", "2", "1", "1", "1"]
    # 1-4k: 2000 and 3000 tokens, t_first_token 500, 600 -> p50 550, p95 595; TTFT 520, 620; total 1435, 1535.
    assert {k: float(got[k][1]) for k in ("t_first_token p50", "t_first_token p95", "ttft p50", "ttft p95",
                                          "total p50", "total p95", "t_queue p95")} == pytest.approx({
        "t_first_token p50": 550, "t_first_token p95": 595, "ttft p50": 570, "ttft p95": 615,
        "total p50": 1485, "total p95": 1530, "t_queue p95": 20})
    assert got["t_retry p50"][1] == ""  # the spans name no run (llm.run.id / llm.attempt): not measured, never 0
    assert [float(v) for v in got["ttft p50"]] == [320, 570, 2020, 1020, 720]
    assert "1000, 4000, 16000" in html


def test_charts_stack_buckets_and_draw_ttft_per_segment(prompts, ann_client):
    html = ann_client.get(URL, WINDOW).content.decode()
    labels = ["&lt;1k", "1-4k", "4-16k", "&gt;16k", "unknown"]  # charts.text: Plotly reads markup in labels
    p50 = {t["name"]: t for t in spec(html, "seg-p50")["data"]}
    assert list(p50) == ["t_queue", "t_conn", "t_first_token", "t_stream", "t_post"]
    assert p50["t_first_token"]["x"] == labels and p50["t_first_token"]["y"] == [300, 550, 2000, 1000, 700]
    assert spec(html, "seg-p95")["data"][2]["y"] == pytest.approx([300, 595, 2000, 1000, 700])
    ttft = spec(html, "seg-ttft")["data"]
    assert [t["name"] for t in ttft] == ["TTFT p50", "TTFT p95"] and ttft[0]["x"] == labels
    assert ttft[0]["y"] == [320, 570, 2020, 1020, 720] and ttft[1]["y"] == pytest.approx([320, 615, 2020, 1020, 720])


def test_tenant_filter_narrows_the_segments(prompts, ann_client):
    got = lines(ann_client.get(URL, {**WINDOW, "tenant": "alice"}).content.decode())
    assert got["segments"] == ["<1k", "1-4k", ">16k", "unknown"]  # no 4-16k: that was tenant "other"
    assert got["requests"] == ["1", "2", "1", "1"] and got["ttft p50"] == ["320.0", "570.0", "1020.0", "720.0"]


def test_prefill_ratio_uses_the_diagnosis_and_its_configured_threshold(prompts, ann_client, settings):
    html = ann_client.get(URL, WINDOW).content.decode()
    # Default prefill_min_count 20: no segment qualifies.
    assert "Not measurable here" in html and lines(html)["in the prefill ratio"] == [""] * 5
    settings.ANALYSIS_THRESHOLDS = {"prefill_min_count": 1}
    html = ann_client.get(URL, WINDOW).content.decode()
    # TTFT p50 of >16k over <1k: 1020 / 320 = 3.1875, below the default 5.0.
    assert "×3.19" in html and "×5<" in html and "below the diagnosis threshold" in html
    assert lines(html)["in the prefill ratio"] == ["✓", "✓", "✓", "✓", ""]
    settings.ANALYSIS_THRESHOLDS = {"prefill_min_count": 1, "prefill_ratio": 3}
    html = ann_client.get(URL, WINDOW).content.decode()
    assert "×3.19" in html and "the prefill-pressure signature" in html


def test_hostile_route_and_tenant_render_as_text(traffic, ann_client):
    html = ann_client.get(URL, {**WINDOW, "route": HOSTILE_ROUTE, "tenant": HOSTILE_TENANT}).content.decode()
    assert HOSTILE_ROUTE not in html and HOSTILE_TENANT not in html
    assert "&lt;script&gt;alert(&quot;tenant&quot;)&lt;/script&gt;" in html
    # The hostile tenant's 20 attempts, all on the hostile route with the factory's 800 input tokens.
    assert lines(html)["requests"] == ["20"] and lines(html)["segments"] == ["<1k"]


def test_members_only(traffic, client, members):
    assert client.get(URL, WINDOW).url.startswith("/login/")
    client.force_login(members["ben"][0])
    assert client.get(URL, {**WINDOW, "project": "alpha"}).status_code == 404
    html = client.get(URL, WINDOW).content.decode()
    assert lines(html)["requests"] == ["10"]  # beta's only
    assert "alpha-svc" not in html and "alert(" not in html
    assert client.get(URL, {**WINDOW, "tenant": BETA_SECRET}).status_code == 200


def test_empty_window_and_empty_filter(traffic, ann_client):
    html = ann_client.get(URL, {"start": "2025-01-05T09:00:00Z", "end": "2025-01-05T10:00:00Z"}).content.decode()
    assert 'id="empty-state"' in html and 'id="segments"' not in html
    html = ann_client.get(URL, {**WINDOW, "tenant": "nobody"}).content.decode()
    assert 'id="segments"' not in html and "No requests" in html and "of tenant nobody" in html
