"""The Scheduler page on hand-built scheduler state: gap_fraction as the diagnosis computes it, per-instance
charts (means, maxima, cap, shaded backlog under cap), the instance table, and who may see it."""
import re
from datetime import timedelta

import pytest

from analysis.panels import scheduler as scheduling
from analysis.rollups.materialize import materialize
from tests import factories as f
from tests import stored
from tests.dashboard.pages import spec, text_of

SVC = "sched-svc"
HOSTILE_INSTANCE = 'gw-1"><script>alert("instance")</script>'
# One minute from BASE: 1 s buckets (series_width_ms(60 s, points=150) = 1 s).
MINUTE = {"project": "alpha", "service": SVC, "start": "2026-01-05T10:00:00Z", "end": "2026-01-05T10:01:00Z"}


def at(seconds: float) -> str:
    return (f.BASE + timedelta(seconds=seconds)).isoformat()


@pytest.fixture
def state(members, ingest):
    """The hostile gw-1 (cap 1): A in flight 0-2 s; B queued 1-2 s behind it (at cap); C queued 3-4 s with nothing
    in flight, in flight 4-5 s. gw-2 (cap 2): D queued 0-2 s with nothing in flight, in flight 2-3 s.
    gw-3 (no cap reported): E queued 0-0.5 s."""
    _, alpha, key = members["ann"]

    def one(start_ms, t_queue, stream, cap=None):
        return f.attempt(t_queue_ms=t_queue, t_first_token_ms=300, t_stream_ms=stream, t_post_ms=100,
                         start_ns=f.BASE_NS + start_ms * f.MS, attributes={"llm.scheduler.cap": cap})

    def build():
        ingest(key, f.request(one(0, 0, 1600, 1), one(1000, 1000, 600, 1), one(3000, 1000, 600, 1),
                              service=SVC, instance=HOSTILE_INSTANCE),
               f.request(one(0, 2000, 600, 2), service=SVC, instance="gw-2"),
               f.request(one(0, 500, 600), service=SVC, instance="gw-3"))
        materialize(alpha.pk, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=1))
    stored.once("scheduler_page_state", (alpha,), build)  # built once per worker, copied for the next tests
    return alpha


def test_gap_fraction_and_the_instance_table(state, ann_client):
    r = ann_client.get("/scheduler/", MINUTE)
    assert r.status_code == 200
    html = r.content.decode()
    # gw-1: 2 s backlog, 1 s of it under cap; gw-2: 2 s, all under cap -> pooled 3 / 4; gw-3 has no cap, so it is
    # left out of the service figure (as evidence.gap_fraction does) but its 0.5 s counts in the backlog time
    assert text_of(html, "gap-fraction") == "0.75"
    assert "4.5 s" in html
    assert "1 instance reported no\n  concurrency cap (gw-3)" in html
    body = html.split('<table id="instances"')[1].split("<tbody>")[1].split("</tbody>")[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    # most backlog first, ties by in-flight time (gw-1 4 s, gw-2 1 s); mean in flight over the covered time:
    # gw-1 4 s / 5 s, gw-2 1 s / 3 s, gw-3 1 s / 1.5 s
    assert rows == [
        ["gw-1&quot;&gt;&lt;script&gt;alert(&quot;instance&quot;)&lt;/script&gt;",
         "1", "0.50", "2 s", "1 s", "1", "1", "0.80"],
        ["gw-2", "2", "1.00", "2 s", "2 s", "1", "1", "0.33"],
        ["gw-3", "unknown", "–", "500 ms", "0 ms", "1", "1", "0.67"],
    ]
    assert HOSTILE_INSTANCE not in html and "<script>alert" not in html


def test_instance_charts_show_means_maxima_cap_and_shaded_gaps(state, ann_client):
    html = ann_client.get("/scheduler/", MINUTE).content.decode()
    gw1, gw2 = spec(html, "instance-0"), spec(html, "instance-1")
    # the hostile name is escaped for Plotly's label markup too
    assert gw1["layout"]["title"]["text"] == (
        'gw-1"&gt;&lt;script&gt;alert("instance")&lt;/script&gt; · gap_fraction 0.50 · cap 1')
    lines = {t["name"]: t for t in gw1["data"]}
    # seconds 0-4 (the zero-length bucket of the last release is left out), drawn at bucket middles
    assert lines["mean queue depth"]["x"] == [at(s + 0.5) for s in range(5)]
    assert lines["mean queue depth"]["y"] == [0, 1, 0, 1, 0] and lines["mean queue depth"]["yaxis"] == "y2"
    assert lines["mean in flight"]["y"] == [1, 1, 1, 0, 1]
    assert lines["max queue depth"]["y"] == [0, 1, 0, 1, 0]
    assert lines["cap"]["y"] == [1] * 5 and lines["cap"]["line"]["shape"] == "hv"
    assert gw1["layout"]["xaxis"]["range"] == [at(0), at(60)]  # every instance spans the whole window
    # backlog under cap only in second 3 (second 1 waited at cap)
    assert [(s["x0"], s["x1"]) for s in gw1["layout"]["shapes"]] == [(at(3), at(4))]
    # gw-2: under cap in seconds 0 and 1, one shaded run
    assert spec(html, "instance-1")["layout"]["title"]["text"] == "gw-2 · gap_fraction 1.00 · cap 2"
    assert [(s["x0"], s["x1"]) for s in gw2["layout"]["shapes"]] == [(at(0), at(2))]
    assert gw2["layout"]["shapes"][0]["showlegend"] is True
    assert spec(html, "instance-2")["layout"]["title"]["text"] == "gw-3 · gap_fraction – · cap unknown"
    # seconds of backlog summed over instances per second: gw-1 at cap in second 1 and under it in second 3,
    # gw-2 under cap in seconds 0-1, gw-3 (no cap) half of second 0
    bars = {t["name"]: t["y"] for t in spec(html, "backlog")["data"]}
    assert bars == {"backlog, all slots busy": [0, 1, 0, 0, 0], "backlog under cap (idle slots)": [1, 1, 0, 1, 0],
                    "backlog, cap unknown": [0.5, 0, 0, 0, 0]}


def test_only_the_busiest_instances_get_a_chart(state, ann_client, monkeypatch):
    monkeypatch.setattr(scheduling, "MAX_INSTANCE_CHARTS", 2)
    html = ann_client.get("/scheduler/", MINUTE).content.decode()
    assert 'id="instance-1"' in html and 'id="instance-2"' not in html
    assert "Charts for the 2 instances with the most backlog; 1 more in the table below." in html
    assert html.count("<tr>") == 4  # header + all three instances in the table


def test_route_and_tenant_filters_do_not_apply_and_say_so(state, ann_client):
    html = ann_client.get("/scheduler/", {**MINUTE, "route": "/nowhere", "tenant": "nobody"}).content.decode()
    assert "route and tenant\n  filter does not apply" in html
    assert text_of(html, "gap-fraction") == "0.75"  # the whole service's state, filters or not
    assert 'id="filters-ignored"' not in ann_client.get("/scheduler/", MINUTE).content.decode()


def test_empty_window_and_unknown_service(state, ann_client):
    r = ann_client.get("/scheduler/", {**MINUTE, "start": "2026-01-04T10:00:00Z", "end": "2026-01-04T11:00:00Z"})
    assert r.status_code == 200 and 'id="empty-state"' in r.content.decode()
    html = ann_client.get("/scheduler/", {**MINUTE, "service": "no-such-svc"}).content.decode()
    assert 'id="no-scheduler-state"' in html and 'id="instance-0"' not in html


def test_membership(traffic, members, client):
    client.force_login(members["ben"][0])
    window = {"start": "2026-01-05T09:55:00Z", "end": "2026-01-05T11:00:00Z"}
    assert client.get("/scheduler/", {"project": "alpha", **window}).status_code == 404
    own = client.get("/scheduler/", window).content.decode()
    assert "beta-svc" in own and "alpha-svc" not in own and 'id="instance-0"' in own
    client.logout()
    r = client.get("/scheduler/", {"project": "alpha", **window})
    assert r.status_code == 302 and r["Location"].startswith("/login/")
