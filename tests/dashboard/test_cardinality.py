"""Pages hold up under one project sending thousands of distinct services, routes, tenants and instances: pickers
list the busiest and search for the rest, tables and stacks keep the top N plus one pooled "others" row, and no page
grows past a fixed size."""
import re
from datetime import timedelta

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from analysis.rollups.materialize import materialize
from tests import factories as f
from tests import stored
from tests.dashboard.conftest import END, START, WINDOW
from tests.dashboard.pages import at, chart, table, trace

SERVICES, ROUTES, TENANTS, INSTANCES = 500, 500, 2000, 300
MAX_PAGE_BYTES = 300_000


@pytest.fixture
def crowd(members, ingest, settings):
    """alpha-svc: 2,000 attempts 1 s apart (1,315 ms long, 100 of them queued), each its own tenant, on 500 routes
    and in pairs on 300 instances of cap 1: the first of a pair is queued with the slot idle, the second while the
    first holds it; plus 500 services svc-000 .. svc-499 with one attempt each. The ingest cardinality guards are
    off, as a project may set them."""
    _, alpha, key = members["ann"]
    alpha.ingest_max_services_per_hour = alpha.ingest_max_routes_per_hour = 0
    alpha.ingest_max_tenants_per_hour = alpha.ingest_max_instances_per_hour = 0
    alpha.save()

    def build():
        req = ExportTraceServiceRequest()
        spans = [at(i, tenant=f"tenant-{i:04}", route=f"/v1/route/{i % ROUTES:03}", t_queue_ms=100.0,
                    attributes={"service.instance.id": f"gw-{i // 2 % INSTANCES:03}", "llm.scheduler.cap": 1})
                 for i in range(TENANTS)]
        req.resource_spans.extend(f.request(*spans, service="alpha-svc").resource_spans)
        for i in range(SERVICES):
            req.resource_spans.extend(f.request(at(2000 + i * 0.1), service=f"svc-{i:03}").resource_spans)
        ingest(key, req)
        materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    stored.once("cardinality_crowd", (alpha,), build)  # built once per worker (~1.2 s), copied for the next tests
    return alpha


def get(client, path, **params):
    response = client.get(path, {"project": "alpha", "service": "alpha-svc", **WINDOW, **params})
    assert response.status_code == 200
    body = response.content.decode()
    assert len(body.encode()) < MAX_PAGE_BYTES, f"{path}: {len(body.encode())} bytes"
    return body


def options(body: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}">(.*?)</select>', body, re.S)
    return re.findall(r'<option value="([^"]*)"', select.group(1))


@pytest.mark.parametrize("path", ["/", "/diagnosis/", "/scheduler/", "/connections/", "/tenants/", "/prompts/",
                                  "/runs/"])
def test_every_page_stays_small_with_pickers_of_the_busiest(ann_client, crowd, path):
    body = get(ann_client, path)
    services, routes = options(body, "service"), options(body, "route")
    # the 50 busiest services: alpha-svc (2,000 attempts), then svc-000 .. svc-048 (one each, by name)
    assert len(services) == 50 and services[:2] == ["alpha-svc", "svc-000"]
    assert "451 more services — search" in body  # 501 services
    assert len(routes) == 51 and routes[0] == ""  # "all routes" and the 50 busiest (4 attempts each)
    assert "450 more routes — search" in body


def test_the_pickers_search_server_side_and_keep_the_selected_value(ann_client, crowd):
    body = get(ann_client, "/", service_q="SVC-49", route_q="route/04", route="/v1/route/499")
    # alpha-svc stays (selected) though it does not contain the search; svc-490 .. svc-499 do
    assert options(body, "service") == ["alpha-svc", *[f"svc-{i}" for i in range(490, 500)]]
    assert "more services" not in body
    # the 10 routes containing route/04 (/v1/route/040 .. 049) and the selected one, 4 attempts each: by name
    assert options(body, "route") == ["", *[f"/v1/route/{i:03}" for i in range(40, 50)], "/v1/route/499"]
    missed = get(ann_client, "/", service_q="no-such-service")
    assert "no service contains “no-such-service”" in missed and len(options(missed, "service")) == 50


def test_overview_stacks_the_busiest_routes_and_pools_the_rest(ann_client, crowd, settings):
    settings.ANALYSIS_TOP_N = 20
    response = ann_client.get("/", {"project": "alpha", "service": "alpha-svc", **WINDOW})
    queue = trace(chart(response, "stack-p50"), "t_queue")
    assert len(queue["x"]) == 21 and queue["x"][-1] == "others (480 routes)"
    assert queue["y"][-1] == 100.0  # every attempt queued 100 ms
    assert len(table(response.content.decode(), "service-status").rows) == 50  # the busiest services only


def test_tenants_table_holds_the_top_rows_and_one_others_row(ann_client, crowd, settings):
    settings.DASHBOARD_TABLE_ROWS = 100
    body = get(ann_client, "/tenants/")
    rows = table(body, "tenants").rows
    assert len(rows) == 101  # 100 tenants (one attempt each: by name) + the pooled row
    assert rows[-1][0][1] == "others (1900 tenants, pooled)" and rows[-1][1][1] == "1900"
    assert "<b>2000</b>" in body  # tenants in all; shares stay over all of them
    # the first of each pair held its slot 100 ms while the second queued: 1,000 tenants with 0.1 % of slot time
    # each, the other 1,000 with none; the 20 first have a row, the 1,980 others one together
    noisy = table(body, "noisy").rows
    assert len(noisy) == 21 and noisy[0][1][0] == "0.001" and noisy[-1][0][1] == "others (1980 tenants, pooled)"
    assert noisy[-1][1][1] == "98 %"  # 980 of the 1,000 holders


def test_scheduler_lists_the_instances_with_most_backlog_and_pools_the_rest(ann_client, crowd, settings):
    settings.ANALYSIS_TOP_N = 20
    body = get(ann_client, "/scheduler/")
    rows = table(body, "instances").rows
    assert len(rows) == 21 and rows[-1][0][1] == "others (280 instances, pooled)"
    assert "<b>300</b>" in body  # instances in all
    assert len(re.findall(r'<script id="instance-\d+"', body)) == 12
    # 1,000 pairs: 100 ms of backlog with the slot idle, then 100 ms with it busy -> 200 s of backlog, gap_fraction 0.5
    assert re.search(r'id="gap-fraction">0.50<', body) and "<b>3.3 min</b>" in body  # 200 s of backlog time, read in minutes
