"""Every service page shows the coverage strip, and "not measured" where the spans cannot give a signal, never 0:
native attempts that send no `admitted` event and say nothing about their connections."""
import re

import pytest

from tests import factories as f
from tests import stored

SVC = "bare-svc"
WINDOW = {"project": "alpha", "service": SVC, "start": "2026-01-05T09:55:00Z", "end": "2026-01-05T11:00:00Z"}
PAGES = ("/", "/diagnosis/", "/scheduler/", "/connections/", "/tenants/", "/prompts/", "/runs/")


def bare(i: int):
    """A native attempt with no `admitted` event and no llm.connection.reused: queue and connections unknown."""
    return f.span(duration_ms=1215 + i, attributes={"tenant.id": "acme", "llm.route": "/v1/chat",
                                                   "gen_ai.usage.input_tokens": 300, "gen_ai.usage.output_tokens": 100},
                  events={"queued": 0, "first_token": 300, "last_token": 1200, "released": 1215 + i})


@pytest.fixture
def bare_traffic(members, ingest):
    from analysis.rollups.materialize import materialize
    from tests.dashboard.conftest import END, START

    _, alpha, key = members["ann"]
    # 30 bare natives, plus 10 vLLM requests that give only their end-to-end time: TTFT over 30 of 40

    def build():
        spans = [bare(i) for i in range(30)]
        spans += [f.span(name="llm_request", duration_ms=800,
                         attributes={"gen_ai.latency.e2e": 0.79, "tenant.id": "acme"}) for _ in range(10)]
        ingest(key, f.request(*spans, service=SVC))
        materialize(alpha.pk, START, END)
    stored.once("coverage_bare_traffic", (alpha,), build)  # built once per worker (~1.1 s), copied for the next tests
    return alpha


def chips(html: str) -> dict[str, str]:
    """data-name -> the chip's text, of the coverage strip."""
    strip = re.search(r'<div class="coverage" id="coverage">(.*?)</div>', html, re.S)
    assert strip, "no coverage strip"
    return {name: " ".join(text.split()) for name, text in
            re.findall(r'<span class="chip [a-z]+" data-name="([a-z_]+)" title="[^"]*">([^<]*)</span>', strip[1])}


@pytest.mark.parametrize("url", PAGES)
def test_every_service_page_shows_the_coverage_strip(bare_traffic, ann_client, url):
    html = ann_client.get(url, WINDOW).content.decode()
    got = chips(html)
    # 40 attempts, none with an admission instant or a connection attribute; 30 of 40 have a first token
    assert got["t_queue"] == "t_queue not measured" and got["connections"] == "connections not measured"
    assert got["ttft"] == "TTFT 75 %" and got["total"] == "total 100 %"
    assert "Measured over 40 attempts (form native 30, form vllm 10)" in " ".join(html.split())
    # the reason is on the chip, per form
    assert "t_queue: 0 % of 40 attempts measured — form native (30): no `admitted` event" in html.replace("&#x60;", "`")


def test_connections_say_not_measured_instead_of_zero(bare_traffic, ann_client):
    html = ann_client.get("/connections/", WINDOW).content.decode()
    assert 'id="connections-not-measured"' in html and "<b>not measured</b>" in html
    assert "0 new connections" not in html and "0.000" not in html


def test_tenants_and_scheduler_say_the_queue_is_not_measured(bare_traffic, ann_client):
    tenants = ann_client.get("/tenants/", WINDOW).content.decode()
    assert "t_queue p95 (not measured)" in tenants and 'id="queue-not-measured"' in tenants
    assert "had a queue in this window" not in tenants  # not "no queue": unknown
    scheduler = ann_client.get("/scheduler/", WINDOW).content.decode()
    assert 'id="queue-not-measured"' in scheduler and "they are not measured, not 0" in scheduler


def test_overview_says_over_which_attempts_ttft_is_and_which_buckets_are_missing(bare_traffic, ann_client):
    html = " ".join(ann_client.get("/", WINDOW).content.decode().split())
    assert "TTFT over 30 of 40 successful attempts (those with a first-token instant: streaming calls)" in html
    assert 'data-name="t_queue"' in html and "t_queue not measured: missing from the stacks" in html
    assert "t_stream measured for 30 of 40" in html


def test_measured_signals_show_no_not_measured_warning(traffic, ann_client):
    # the shared traffic: native attempts with every event and llm.connection.reused
    html = ann_client.get("/connections/", {**WINDOW, "service": "alpha-svc"}).content.decode()
    got = chips(html)
    assert got["connections"] == "connections 100 %" and got["t_queue"] == "t_queue 100 %"
    assert 'id="connections-not-measured"' not in html


def test_ben_sees_no_strip_of_alphas_service(bare_traffic, ben):
    html = ben.get("/connections/", {"service": SVC, "start": WINDOW["start"], "end": WINDOW["end"]}).content.decode()
    assert "form native 30" not in html
