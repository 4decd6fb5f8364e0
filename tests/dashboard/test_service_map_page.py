"""The Service map page: each pair of services seen in one trace, with its calls and the time between the layers;
an empty state that says how to link the layers; only the project's members see it."""
from datetime import timedelta

from analysis.rollups.materialize import materialize
from tests import factories as f
from tests.analysis.test_layers import ENGINE, GATEWAY, request_path
from tests.dashboard.conftest import END, START, WINDOW
from tests.dashboard.pages import spec


def test_the_map_lists_each_pair_with_its_calls_and_gaps(members, ingest, ann_client):
    _, alpha, key = members["ann"]
    gateway, engine = [], []
    for i in range(3):
        gw, eng = request_path(f.BASE_NS + (60 + 30 * i) * 10**9)
        gateway += gw
        engine += eng
    ingest(key, f.request(*gateway, service=GATEWAY), f.request(*engine, service=ENGINE))
    materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    html = ann_client.get("/service-map/", {"project": "alpha", **WINDOW}).content.decode()
    row = html.split(f'data-gateway="{GATEWAY}" data-engine="{ENGINE}"')[1].split("</tr>")[0]
    cells = [c.split("</td>")[0] for c in row.split('<td class="num">')[1:]]
    assert (cells[0], cells[3], cells[4], cells[5], cells[6]) == ("3", "500 ms", "450 ms", "50 ms", "60 ms")
    assert cells[7] == "200 ms"  # t_gateway: the server span outside its call
    sankey = spec(html, "service-map")["data"][0]
    assert sankey["type"] == "sankey" and sankey["link"]["value"] == [3]
    # the other project's member sees none of it
    from django.test import Client

    other = Client()
    other.force_login(members["ben"][0])
    assert GATEWAY not in other.get("/service-map/", {"project": "beta", **WINDOW}).content.decode()


def test_without_two_layers_the_page_says_how_to_link_them(traffic, ann_client):
    html = ann_client.get("/service-map/", {"project": "alpha", **WINDOW}).content.decode()
    assert 'id="no-layers"' in html and "traceparent" in html


def test_a_runs_waterfall_draws_the_engine_beneath_the_call_and_the_network_between(members, ingest, ann_client):
    """The engine's attempt (same trace, another service) is not a try of the gateway's run: it is drawn under the
    call with its bucket split, and the gaps on either side of it as network."""
    _, alpha, key = members["ann"]
    gw, eng = request_path(f.BASE_NS + 60 * 10**9)
    ingest(key, f.request(*gw, service=GATEWAY), f.request(*eng, service=ENGINE))
    materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    run_id = gw[0].trace_id.hex()
    html = ann_client.get(f"/runs/{run_id}/", {"project": "alpha", **WINDOW}).content.decode()
    figure = spec(html, "waterfall")
    traces = {t["name"]: t for t in figure["data"] if t["type"] == "bar"}
    network = traces["network (between layers)"]
    # the call starts at +100 ms and ends at +1400; the engine's span from +130 to +1370
    assert list(zip(network["base"], network["x"])) == [(100.0, 30.0), (1370.0, 30.0)]
    labels = figure["layout"]["yaxis"]["ticktext"]
    assert any(label.endswith(f"{ENGINE} buckets") for label in labels)
    assert "t_queue" in traces and 130.0 in traces["t_queue"]["base"]  # the engine's queue, from its own start
    # one attempt in the run: the engine's is beneath it, not a retry
    assert '<table id="attempts">' in html and html.split('<table id="attempts">')[1].split("</table>")[0].count("<tr") == 2


def test_a_gateways_overview_and_diagnosis_show_where_its_time_went_across_layers(members, ingest, ann_client):
    _, alpha, key = members["ann"]
    gw, eng = request_path(f.BASE_NS + 60 * 10**9)
    ingest(key, f.request(*gw, service=GATEWAY), f.request(*eng, service=ENGINE))
    materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    for path in ("/", "/diagnosis/"):
        html = ann_client.get(path, {"project": "alpha", "service": GATEWAY, **WINDOW}).content.decode()
        card = html.split('id="across-layers"')[1].split("</div>")[0]
        assert '<b id="t-gateway">200 ms / 200 ms</b>' in card and '<b id="t-network-ttft">50 ms / 50 ms</b>' in card
        assert f'data-engine="{ENGINE}"' in card, path
    # the engine, which calls nothing, has no such card
    engine_page = ann_client.get("/", {"project": "alpha", "service": ENGINE, **WINDOW}).content.decode()
    assert 'id="across-layers"' not in engine_page
