"""The weekly review's capacity section: the worksheet this week against the week before (tests/reports/conftest.py:
alpha-svc has 10 runs a second apart in each week's first minute, on instance gw-1)."""
import pytest
from django.core.management import call_command

from reports import build
from tests.reports.conftest import WEEK1, WEEK2
from tests.reports.test_build import _service


def test_capacity_week_over_week(weeks):
    rows = {r["key"]: r for r in _service(build.build(weeks, WEEK2), "alpha-svc")["capacity"]["rows"]}
    # 10 runs in one minute each week: 10 / 60 requests/s at peak; 9 gaps of 1 s between them
    assert rows["peak_rps"] == {"key": "peak_rps", "label": "peak requests/s", "this": pytest.approx(10 / 60),
                                "last": pytest.approx(10 / 60), "change": pytest.approx(0)}
    assert (rows["mean_rps"]["this"], rows["mean_rps"]["last"]) == (pytest.approx(1.0), pytest.approx(1.0))
    assert (rows["tokens_in"]["this"], rows["instances"]["this"], rows["instances"]["last"]) == (800, 1, 1)
    # the minute's part from the first request (10:00:00) to the last release, on 1 GPU assumed: the last attempt
    # (10:00:09) takes 10 + 690 + 900 + 15 ms this week, 10 + 300 + 900 + 15 the week before
    assert rows["gpu_hours"]["this"] == pytest.approx(10.615 / 3600)
    assert rows["gpu_hours"]["last"] == pytest.approx(10.225 / 3600)
    assert rows["cost_per_1k_requests_usd"]["this"] is None and rows["cost_per_1k_requests_usd"]["change"] is None


def test_first_week_has_nothing_to_compare_with(weeks):
    rows = {r["key"]: r for r in _service(build.build(weeks, WEEK1), "alpha-svc")["capacity"]["rows"]}
    assert rows["peak_rps"]["last"] is None and rows["peak_rps"]["change"] is None
    assert rows["instances"]["last"] == 0 and rows["instances"]["change"] is None


def test_the_review_page_shows_the_section(weeks, ann_client):
    call_command("send_weekly_review", project="alpha", week=WEEK2)
    page = ann_client.get(f"/reviews/{WEEK2}/?project=alpha").content.decode()
    assert 'id="capacity-alpha-svc"' in page and "<td>peak requests/s</td>" in page
    assert "Latency against load:" in page
