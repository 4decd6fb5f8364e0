"""The Capacity page: the worksheet with a row per region, latency against load with its chart, the CSV downloads
(the API's numbers, tests/analysis/capacity_spans.py), the nav link, and only for the project's members."""
import csv
from datetime import timedelta
from io import StringIO

import pytest

from analysis.rollups.materialize import materialize
from budgets.models import Budget
from tests.analysis import capacity_spans as spans
from tests.dashboard.pages import by_header, spec, table, text_of

QUERY = {"project": "alpha", "service": spans.SERVICE, **spans.WINDOW}


@pytest.fixture
def sent(members, ingest):
    _, alpha, key = members["ann"]
    ingest(key, *spans.requests())
    materialize(alpha.pk, spans.START - timedelta(hours=1), spans.END + timedelta(hours=1))
    return alpha


def test_the_worksheet_has_the_service_and_its_regions(sent, ann_client):
    html = ann_client.get("/capacity/", QUERY).content.decode()
    assert text_of(html, "peak-rps") == "0.1 req/s" and text_of(html, "instances") == "2"
    rows = {r["scope"]: r for r in by_header(table(html, "worksheet"))}
    assert list(rows) == ["all", "eu-west-1", "us-east-1"]
    assert rows["all"]["tokens in mean"] == "982" and rows["all"]["tokens in p95"] == "1,800"
    assert rows["us-east-1"]["instances"] == "1" and rows["eu-west-1"]["tokens in mean"] == "1,800"
    # no price: "not measured", with the reason on the page, never $0
    assert rows["all"]["cost / 1k requests"] == "not measured"
    assert "no GPU-hour price configured (set GPU_HOUR_PRICE_USD)" in html
    assert 'class="active">Capacity</a>' in html


def test_latency_against_load_is_drawn_with_the_objective(sent, ann_client):
    html = ann_client.get("/capacity/", QUERY).content.decode()
    figure = spec(html, "capacity-load")
    names = [t["name"] for t in figure["data"]]
    assert names == ["instance-minutes", "TTFT p95", "objective 600 ms"]
    assert figure["data"][1]["y"] == [320.0, 320.0, 320.0]  # every attempt: 20 ms queue + 300 ms to the first token
    assert "no load level has 20 TTFT values" in html  # too few values to judge: said, not guessed
    # a budget set now is the objective at once, though the numbers read a moment ago are kept (panels/kept.py)
    Budget.objects.create(project=sent, service=spans.SERVICE, total_ms=900, percentile=95)
    again = spec(ann_client.get("/capacity/", QUERY).content.decode(), "capacity-load")
    assert [t["name"] for t in again["data"]] == ["instance-minutes", "total p95", "objective 900 ms"]


def test_csv_downloads_are_the_worksheet_and_the_levels(sent, ann_client):
    response = ann_client.get("/capacity/", {**QUERY, "format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="capacity-cap-svc-worksheet.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(StringIO(response.content.decode())))
    assert [r["scope"] for r in rows] == ["all", "eu-west-1", "us-east-1"]
    assert (rows[0]["runs"], rows[0]["instances"], rows[0]["cost_per_1k_requests_usd"]) == ("11", "2", "")
    levels = list(csv.DictReader(StringIO(ann_client.get("/capacity/", {**QUERY, "format": "csv", "table": "levels"})
                                          .content.decode())))
    assert len(levels) == 3 and {r["metric"] for r in levels} == {"ttft"} and levels[0]["objective_ms"] == "600.0"


def test_a_route_without_requests_says_so(sent, ann_client):
    html = ann_client.get("/capacity/", {**QUERY, "route": "/v1/none"}).content.decode()
    assert 'id="no-requests"' in html and 'id="worksheet"' not in html


def test_ben_sees_nothing_of_alpha(sent, ben):
    assert ben.get("/capacity/", QUERY).status_code == 404
    assert ben.get("/capacity/", {**QUERY, "format": "csv"}).status_code == 404
