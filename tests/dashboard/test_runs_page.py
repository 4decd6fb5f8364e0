"""The Runs page: search by run id / trace id / tenant, slowest-first lists with the filters the Diagnosis page
links to, and one run's waterfall with exact offsets worked out by hand from factory spans; hostile strings
as text; membership."""
import re
from datetime import timedelta
from html import unescape
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from django.test import Client
from django.utils.html import escape

from analysis.rollups.materialize import materialize
from dashboard import charts
from tests import factories as f
from tests import stored
from tests.dashboard.conftest import END, HOSTILE_TENANT, START, WINDOW
from tests.dashboard.pages import chart, trace
from tests.dashboard.test_tenants_page import table

RUN_ID = "run-retried-1"
FAILED_RUN = "run-failed-1"
RUN_TENANT = '<b>retrier</b>"&'
HOSTILE_NOTE = "<img src=x onerror=alert(2)>"
HOSTILE_SPAN = "<svg onload=alert(3)>"
AT = f.BASE_NS + 30 * 60_000 * f.MS  # 10:30, clear of the conftest traffic's timestamps


def ms(offset):
    return AT + int(offset * f.MS)


@pytest.fixture
def runs(traffic, members, ingest):
    """In alpha, on top of the conftest traffic (40 one-attempt runs, totals 1225 + i ms, t_queue 10 + i):

    run-retried-1 in trace `root`: root span at +0 (6600 ms) with a retrieval stage (+0, 60 ms);
      attempt 1 at +100: queued +0, admitted +75, connect stage +75 (30 ms), no token, ERROR timeout, 5000 ms;
      back-off 250 ms; attempt 2 at +5350: t_queue 10, connect +10 (40 ms), tokenize +50 (5 ms), network +60
      (200 ms), a span named HOSTILE_SPAN +1000 (50 ms), first token +310, stream 900, post 15 -> 1225 ms;
      t_retry 5250, total 6475, TTFT 5560.
    run-failed-1 at 10:55: one attempt, ERROR rate_limited, 800 ms.
    """
    _, alpha, key = members["ann"]

    def build():
        run = {"tenant.id": RUN_TENANT, "llm.route": "/v1/chat/completions", "llm.run.id": RUN_ID}
        root = f.span(name="chat.handle", start_ns=ms(0), duration_ms=6600)
        retrieval = f.stage(root, "retrieval", 0, 60)
        first = f.span(name="llm.request", start_ns=ms(100), duration_ms=5000, trace_id=root.trace_id, parent=root,
                       events={"queued": 0, "admitted": 75}, status_code=f.Status.STATUS_CODE_ERROR,
                       attributes={**run, "llm.attempt": 1, "llm.retry.cause": "timeout",
                                   "llm.connection.reused": False})
        second = f.attempt(t_queue_ms=10, t_first_token_ms=300, t_stream_ms=900, t_post_ms=15, tenant=RUN_TENANT,
                           reused=False, attributes={**run, "llm.attempt": 2}, start_ns=ms(5350),
                           trace_id=root.trace_id, parent=root)
        connect_2 = f.stage(second, "connect", 10, 40)
        connect_2.attributes.append(f.kv("note", HOSTILE_NOTE))
        hostile = f.span(name=HOSTILE_SPAN, start_ns=ms(6350), duration_ms=50, trace_id=root.trace_id, parent=second)
        stages = [f.stage(first, "connect", 75, 30), connect_2, f.stage(second, "tokenize", 50, 5),
                  f.stage(second, "network", 60, 200), hostile]
        failed = f.span(name="llm.request", start_ns=ms(25 * 60_000), duration_ms=800,
                        status_code=f.Status.STATUS_CODE_ERROR, events={"queued": 0, "admitted": 5}, attributes={
                            "tenant.id": "acme", "llm.route": "/v1/chat/completions", "llm.run.id": FAILED_RUN,
                            "llm.retry.cause": "rate_limited", "llm.connection.reused": True})
        ingest(key, f.request(root, retrieval, first, second, *stages, failed, service="alpha-svc"))
        materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
        return root.trace_id.hex()
    trace_id = stored.once("dashboard_runs", (alpha, traffic["beta"]), build)
    return {"trace_id": trace_id, "alpha": alpha}


def get(client, path="/runs/", **params):
    return client.get(path, {"project": "alpha", **WINDOW, **params})


def test_slowest_first_by_total_with_exact_totals_including_retries(runs, ann_client):
    response = get(ann_client)
    assert response.status_code == 200
    rows = table(response.content.decode(), "runs").rows
    # run-retried-1: 5250 (t_retry) + 1225 -> 6475; then run-failed-1's 800 sits below the traffic's 1225 + i
    assert [r[9][0] for r in rows[:4]] == ["6475.0", "1264.0", "1263.0", "1262.0"]
    assert rows[0][0][1].startswith(RUN_ID) and rows[0][4][1] == "2 ↻" and rows[0][5][1] == "ok retried after timeout"
    assert (rows[0][7][0], rows[0][8][0]) == ("5250.0", "5560.0")  # t_retry, TTFT incl. retries (5250 + 310)
    assert len(rows) == 42 and rows[-1][0][1].startswith(FAILED_RUN) and rows[-1][9][0] == "800.0"


@pytest.mark.parametrize("params, first, value_column, value", [
    ({"sort": "ttft"}, RUN_ID, 8, "5560.0"),
    ({"sort": "slowest"}, RUN_ID, 9, "6475.0"),  # an alias of total, as the Diagnosis page may link it
    ({"bucket": "t_queue"}, RUN_ID, 10, "75.0"),  # the failed attempt's 75 beats the traffic's 10 + 39
    ({"bucket": "t_conn"}, RUN_ID, 10, "40.0"),  # the largest over the run's attempts: 40 > 30
    ({"sort": "recent"}, FAILED_RUN, 9, "800.0"),  # queued at 10:55, the latest
])
def test_orders_the_diagnosis_page_links_to(runs, ann_client, params, first, value_column, value):
    rows = table(get(ann_client, **params).content.decode(), "runs").rows
    assert rows[0][0][1].startswith(first) and rows[0][value_column][0] == value
    if "bucket" in params:  # then the traffic's t_queue 49, 48... / t_conn 0
        assert rows[1][10][0] == ("49.0" if params["bucket"] == "t_queue" else "0.0")


def test_status_and_retried_filters(runs, ann_client):
    failed = table(get(ann_client, status="error").content.decode(), "runs").rows
    assert [(r[0][1].split()[0], r[5][1]) for r in failed] == [(FAILED_RUN, "error rate_limited")]
    retried = table(get(ann_client, retried="1").content.decode(), "runs").rows
    assert [r[0][1].split()[0] for r in retried] == [RUN_ID]
    assert len(table(get(ann_client, status="ok").content.decode(), "runs").rows) == 41
    # with a bucket order, the final status still filters (attempt 1 of run-retried-1 failed, its run did not)
    by_queue = table(get(ann_client, status="error", bucket="t_queue").content.decode(), "runs").rows
    assert [(r[0][1].split()[0], r[10][0]) for r in by_queue] == [(FAILED_RUN, "5.0")]
    by_queue = table(get(ann_client, status="ok", bucket="t_queue").content.decode(), "runs").rows
    assert len(by_queue) == 41 and (by_queue[0][0][1].split()[0], by_queue[0][10][0]) == (RUN_ID, "75.0")
    # unknown values are ignored, not errors
    assert len(table(get(ann_client, status="bogus", sort="nope", bucket="x").content.decode(), "runs").rows) == 42


@pytest.mark.parametrize("how", ["run id", "trace id", "trace prefix", "tenant"])
def test_search_finds_the_run(runs, ann_client, how):
    q = {"run id": RUN_ID, "trace id": runs["trace_id"], "trace prefix": runs["trace_id"][:8].upper()}.get(how)
    response = get(ann_client, q=q) if q else get(ann_client, tenant=RUN_TENANT)
    html = response.content.decode()
    rows = table(html, "runs").rows
    assert [(r[0][1].split()[0], r[1][1], r[9][0]) for r in rows] == [(RUN_ID, "alpha-svc", "6475.0")]
    assert f'href="/runs/{RUN_ID}/?' in html
    assert escape(RUN_TENANT) in html and RUN_TENANT not in html


def test_search_across_services_and_a_miss_offers_a_wider_window(runs, ann_client):
    # the id search ignores the service filter: whoever pastes an id need not know its service
    rows = table(get(ann_client, q=RUN_ID, service="other-svc").content.decode(), "runs").rows
    assert [r[0][1].split()[0] for r in rows] == [RUN_ID]
    missing = get(ann_client, q="0123456789abcdef")
    html = missing.content.decode()
    assert missing.status_code == 200 and 'id="not-found"' in html and 'id="runs"' not in html
    link = re.search(r'<a id="wider" href="\?([^"]*)"', html).group(1)
    query = parse_qs(unescape(link))
    assert query["q"] == ["0123456789abcdef"] and "service" not in query
    assert (query["start"], query["end"]) == (["2025-12-29T11:00:00Z"], ["2026-01-05T11:00:00Z"])
    # the run's window searched from the 7-day link: found
    assert len(table(get(ann_client, q=RUN_ID, start=query["start"][0], end=query["end"][0]).content.decode(),
                     "runs").rows) == 1
    # a short prefix is not a prefix search
    assert 'id="not-found"' in get(ann_client, q=runs["trace_id"][:7]).content.decode()


def test_waterfall_has_both_attempts_buckets_back_off_and_stages_at_exact_offsets(runs, ann_client):
    response = get(ann_client, f"/runs/{RUN_ID}/", service="alpha-svc")
    assert response.status_code == 200
    spec = chart(response, "waterfall")
    assert spec["layout"]["yaxis"]["ticktext"] == [
        "chat.handle", "└ retrieval", "attempt 1 (error: timeout)", "└ buckets", "└ connect",
        "back-off before attempt 2", "attempt 2 (ok)", "└ buckets", "└ connect", "└ tokenize", "└ network",
        "└ " + charts.text(HOSTILE_SPAN)]

    def bars(name):
        t = trace(spec, name)
        assert t["type"] == "bar" and t["orientation"] == "h"
        assert t["width"] == [charts.ROW_HEIGHT] * len(t["y"])  # one row tall, whatever rows the group is on
        return list(zip(t["y"], t["base"], t["x"]))

    assert bars("failed attempt") == [(2, 100, 5000)]
    assert trace(spec, "failed attempt")["text"] == ["failed: timeout"]
    assert bars("attempt") == [(6, 5350, 1225)]
    assert bars("retry back-off") == [(5, 5100, 250)]  # attempt 1 ended at +5100, attempt 2 started at +5350
    assert bars("t_queue") == [(3, 100, 75), (7, 5350, 10)]
    assert bars("t_conn") == [(3, 175, 30), (7, 5360, 40)]
    assert bars("t_first_token") == [(7, 5400, 260)]  # 300 - 40 of connect
    assert bars("t_stream") == [(7, 5660, 900)]
    assert bars("t_post") == [(7, 6560, 15)]
    assert bars("stage connect") == [(4, 175, 30), (8, 5360, 40)]
    assert bars("stage tokenize") == [(9, 5400, 5)]
    assert bars("stage network") == [(10, 5410, 200)]
    assert bars("stage retrieval") == [(1, 0, 60)]
    assert bars("other span") == [(0, 0, 6600), (11, 6350, 50)]
    assert "&lt;svg onload=alert(3)&gt;" in trace(spec, "other span")["hovertext"][1]
    assert trace(spec, "retry back-off")["hovertext"] == ["retry back-off before attempt 2 (ok): 250 ms"]
    assert trace(spec, "failed attempt")["marker"]["color"] == charts.RUN_COLORS["failed attempt"]


def test_run_tables_show_per_attempt_buckets_and_escaped_attributes(runs, ann_client):
    response = get(ann_client, f"/runs/{RUN_ID}/")  # no service: a pasted URL finds the run in any service
    html = response.content.decode()
    card = " ".join(re.search(r'id="run-summary">(.*?)</div>', html, re.S).group(1).split())
    for stat in ("attempts<b>2 ↻", "final status<b>ok", "TTFT incl. retries<b>5.56 s",
                 "total incl. retries<b>6.47 s", "t_retry<b>5.25 s", runs["trace_id"]):
        assert stat in card
    attempts = table(html, "attempts").rows
    assert [(r[0][1], r[2][1], r[3][1], r[4][1], r[5][1], r[6][1], r[11][1]) for r in attempts] == [
        ("attempt 1 (error: timeout)", "+100", "–", "75", "30", "–", "–"),
        ("attempt 2 (ok) final", "+5,350", "250", "10", "40", "260", "5,250")]
    spans = table(html, "spans").rows
    assert [(r[0][1], r[1][1], r[2][1], r[4][0], r[5][0]) for r in spans] == [
        ("run", "chat.handle", "other", "0.0", "6600.0"), ("run", "· retrieval", "retrieval", "0.0", "60.0"),
        ("1", "llm.request", "attempt", "100.0", "5000.0"), ("1", "· connect", "connect", "175.0", "30.0"),
        ("2", "chat", "attempt", "5350.0", "1225.0"), ("2", "· connect", "connect", "5360.0", "40.0"),
        ("2", "· tokenize", "tokenize", "5400.0", "5.0"), ("2", "· network", "network", "5410.0", "200.0"),
        ("2", f"· {HOSTILE_SPAN}", "other", "6350.0", "50.0")]
    assert "first_token +310" in spans[4][7][1]
    assert escape(HOSTILE_NOTE) in html and HOSTILE_NOTE not in html
    assert escape(RUN_TENANT) in html and RUN_TENANT not in html
    assert escape(HOSTILE_SPAN) in html and HOSTILE_SPAN not in html
    assert 'id="reused"' not in html


def test_a_run_id_sent_by_unrelated_requests_is_flagged(members, traffic, ingest, ann_client):
    _, alpha, key = members["ann"]
    twice = [f.attempt(attributes={"llm.run.id": "run-reused", "llm.attempt": 1}, start_ns=ms(offset))
             for offset in (0, 600_000)]
    ingest(key, f.request(*twice, service="alpha-svc"))
    materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    html = get(ann_client, "/runs/run-reused/").content.decode()
    assert 'id="reused"' in html
    assert [r[3][1] for r in table(html, "attempts").rows] == ["–", "598,765"]  # back-off: 600,000 - 1,235


def test_unknown_run_is_a_404_in_the_dashboard_layout(runs, ann_client):
    response = get(ann_client, "/runs/no-such-run/")
    html = response.content.decode()
    assert response.status_code == 404 and 'id="run-missing"' in html and "no-such-run" in html
    assert 'id="filters"' in html and "Runs</a>" in html  # the layout: filter bar and navigation
    # a run of another service, named with its service, is no match either
    assert get(ann_client, f"/runs/{RUN_ID}/", service="other-svc").status_code == 404


def test_ben_cannot_open_or_find_alphas_run_and_anonymous_is_redirected(runs, members, traffic):
    ben = Client()
    ben.force_login(members["ben"][0])
    assert ben.get(f"/runs/{RUN_ID}/", {"project": "alpha", **WINDOW}).status_code == 404
    own = ben.get(f"/runs/{RUN_ID}/", WINDOW)  # his own project: no such run there
    assert own.status_code == 404 and "retrier" not in own.content.decode()
    for q in (RUN_ID, runs["trace_id"]):
        html = ben.get("/runs/", {"q": q, **WINDOW}).content.decode()
        assert 'id="not-found"' in html and 'id="runs"' not in html and "alpha-svc" not in html
    assert ben.get("/runs/", {"project": "alpha", "q": RUN_ID, **WINDOW}).status_code == 404
    target = f"/runs/{RUN_ID}/?{urlencode({'project': 'alpha', **WINDOW})}"
    anonymous = Client().get(target)
    location = urlparse(anonymous["Location"])
    assert anonymous.status_code == 302 and location.path == "/login/" and parse_qs(location.query)["next"] == [target]
    assert Client().get("/runs/", WINDOW).status_code == 302


def test_hostile_tenant_filter_is_echoed_as_text(runs, ann_client):
    html = get(ann_client, tenant=HOSTILE_TENANT).content.decode()
    assert escape(HOSTILE_TENANT) in html and HOSTILE_TENANT not in html
    assert len(table(html, "runs").rows) == 20  # the conftest traffic's odd attempts
