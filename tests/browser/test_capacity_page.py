"""The Capacity page in a real browser, on its own simulated traffic: two instances with 8 slots each in two regions on
2 GPUs, traffic climbing in steps past what they serve. The worksheet with its region rows, the latency-vs-load chart
drawn with the knee and the peak marked, a clean console; a screenshot in test-artifacts/screenshots/capacity.png."""
from dataclasses import replace

import pytest
from selenium.webdriver.common.by import By

from tests.browser.conftest import PASSWORD, USERNAME, Site, committed_live_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
SERVICE = "llm-gateway"
REGIONS = ("us-east-1", "eu-west-1")


@pytest.fixture(scope="module")
def site(chromium, django_db_setup, django_db_blocker, clickhouse_schema):
    """This module's live server (tests/browser/conftest.py's `site` holds other traffic): a member, a project with a
    1 s TTFT budget, and 30 simulated minutes sent through the real ingest path and materialized."""
    from django.contrib.auth.models import User

    from budgets.models import Budget, StageTarget
    from projects.models import ApiKey, Project
    from simulator.scenarios import PRESETS
    from tests.analysis.capacity_traffic import send

    with committed_live_server(django_db_blocker) as url:
        user = User.objects.create_user(USERNAME, password=PASSWORD)
        project = Project.objects.create(name="capacity-lab")
        project.members.add(user)
        key, raw = ApiKey.issue(project, ["ingest", "read"], name="simulator")
        budget = Budget.objects.create(project=project, service=SERVICE, total_ms=30_000, name="chat")
        StageTarget.objects.create(budget=budget, stage="ttft", target_ms=1000)
        base = PRESETS["healthy"]
        stairs = tuple((0.1 * i, 0.1, 1 + 0.3 * i) for i in range(1, 10))
        scenario = base.with_(rps=0.9, instances=2, cap=8, timeout_s=600.0, regions=REGIONS, gpus=2,
                              tenants=tuple(replace(t, bursts=stairs) for t in base.tenants))
        sent = send(project, raw, scenario, 30 * 60, seed=7)
        yield Site(url=url, project=project, key_prefix=key.prefix,
                   attempts=sum(len(r.attempts) for r in sent.runs), diagnosis=None)


def test_capacity_page_draws_the_worksheet_and_the_knee(browser):
    browser.get("/")
    browser.wait_for_charts()
    browser.console_errors()
    browser.nav("Capacity")
    browser.wait(lambda d: d.find_element(By.CSS_SELECTOR, "nav a.active").text == "Capacity",
                 "Capacity did not become the active page")
    assert browser.wait_for_charts() == 1
    browser.screenshot("capacity")
    assert browser.driver.find_element(By.TAG_NAME, "h1").text.startswith(f"Capacity {SERVICE}")
    assert browser.console_errors() == []
    scopes = [td.text for td in browser.driver.find_elements(By.CSS_SELECTOR, "#worksheet tbody tr td:first-child")]
    assert scopes == ["all", *sorted(REGIONS)]
    assert browser.driver.find_element(By.ID, "instances").text == "2"
    headroom = browser.driver.find_element(By.ID, "headroom").text
    assert "the load at which TTFT p95 reaches 1 s" in headroom and "instance-minutes near that load" in headroom
    # the knee and the peak as vertical lines with their labels, the objective as a dashed line, all drawn
    drawn = browser.js("""
        const el = document.querySelector('[data-chart="capacity-load"]');
        return [el._fullLayout.shapes.length, el._fullLayout.annotations.map(a => a.text),
                el.data.map(t => t.name), el.querySelectorAll('.shapelayer path').length];""")
    shapes, labels, traces, paths = drawn
    assert shapes == 2 and paths >= 2 and [t.split()[0] for t in labels] == ["knee", "peak"]
    assert traces == ["instance-minutes", "TTFT p95", "objective 1 s"]
    # nothing reads None, NaN or a raw float on the page
    text = browser.driver.find_element(By.TAG_NAME, "main").text
    assert "None" not in text and "nan" not in text.lower().split()
    assert "format=csv" in browser.driver.find_element(By.ID, "csv").get_attribute("href")
