"""The weekly review's SLO section: each SLO's compliance and error budget over its window ending with the week
(tests/reports/conftest.py: alpha-svc's week 2 has 10 attempts of TTFT 610..700 ms step 10, total TTFT + 915 ms)."""
import pytest
from django.core.management import call_command

from reports import build
from slos.models import Slo
from tests.reports.conftest import WEEK1, WEEK2


@pytest.fixture
def slos(weeks):
    ttft = Slo.objects.create(project=weeks, service="alpha-svc", signal="ttft", threshold_ms=650, objective=0.9,
                              window_days=7)
    total = Slo.objects.create(project=weeks, service="alpha-svc", signal="total", threshold_ms=2000,
                               objective=0.99, window_days=28)
    return ttft, total


def test_each_slo_at_the_weeks_end(slos):
    ttft, total = slos
    rows = {r["id"]: r for r in build.build(ttft.project, WEEK2)["slos"]}
    # week 2 alone (7 days): TTFT 610, 620, 630, 640 are under 650 ms, 650..700 are not: 4 good, 6 bad;
    # allowed 10 % of 10 = 1 bad request: 1 - 6 / 1 = -5 (overspent five times over)
    assert rows[ttft.pk]["requests"] == {"good": 4, "bad": 6, "not_measured": 0}
    assert rows[ttft.pk]["compliance"] == pytest.approx(0.4) and rows[ttft.pk]["met"] is False
    assert rows[ttft.pk]["budget_remaining"] == pytest.approx(-5)
    # 28 days reach back over week 1 too: 20 totals of 1,225 ms and 1,525..1,615 ms, all under 2 s
    assert rows[total.pk]["requests"] == {"good": 20, "bad": 0, "not_measured": 0}
    assert (rows[total.pk]["compliance"], rows[total.pk]["budget_remaining"], rows[total.pk]["met"]) == (1, 1, True)
    assert rows[total.pk]["description"] == "alpha-svc: 99% total < 2 s (28 days)"


def test_a_week_before_any_traffic_is_not_measured(slos):
    ttft, _ = slos
    row = {r["id"]: r for r in build.build(ttft.project, "2026-W01")["slos"]}[ttft.pk]
    assert (row["compliance"], row["budget_remaining"], row["met"]) == (None, None, None)
    assert build.build(ttft.project, WEEK1)["slos"][0]["requests"]["good"] == 10  # week 1: TTFT 310 ms each


def test_the_review_page_shows_the_section(slos, ann_client):
    ttft, total = slos
    call_command("send_weekly_review", project="alpha", week=WEEK2)
    page = ann_client.get(f"/reviews/{WEEK2}/?project=alpha").content.decode()
    assert 'id="review-slos"' in page
    assert (f'<tr id="review-slo-{ttft.pk}" class="warning"><td>alpha-svc: 90% TTFT &lt; 650 ms (7 days)</td>\n'
            '    <td class="num">40% (objective 90%)</td>\n    <td class="num">-500%</td>'
            '<td class="num">4 / 6</td>') in page
    assert f'<tr id="review-slo-{total.pk}" class=""><td>alpha-svc: 99% total &lt; 2 s (28 days)</td>' in page
