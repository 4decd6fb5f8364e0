"""The SLOs page in a real browser, on its own factory traffic of the last 6 hours (fast, slow, failed and
non-streaming requests of known shares): an SLO created through the page's form from the nav, listed with the
compliance, error budget and not-measured share worked out from what was sent, its burn-down chart drawn by Plotly,
a clean console; a screenshot in test-artifacts/screenshots/slos.png."""
import re
from datetime import datetime, timedelta, timezone

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from analysis.wording import fmt
from tests.browser.conftest import PASSWORD, USERNAME, Site, committed_live_server
from tests.slos.traffic import mixed, truth

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
SERVICE = "llm-gateway"
SHARES = {"fast": 0.8, "slow": 0.1, "failed": 0.04, "unstreamed": 0.06}


@pytest.fixture(scope="module")
def sent():
    now = datetime.now(timezone.utc).replace(microsecond=0)
    return mixed(now - timedelta(hours=6), 6, 400, SHARES, seed=36)


@pytest.fixture(scope="module")
def site(chromium, django_db_setup, django_db_blocker, clickhouse_schema, sent):
    """This module's live server: a member and a project whose SERVICE sent `sent`, materialized."""
    from django.contrib.auth.models import User

    from analysis.rollups.materialize import materialize
    from ingest.pipeline import export, get_writer
    from projects.models import ApiKey, Project
    from tests import factories as f

    with committed_live_server(django_db_blocker) as url:
        user = User.objects.create_user(USERNAME, password=PASSWORD)
        project = Project.objects.create(name="slo-lab")
        project.members.add(user)
        key, raw = ApiKey.issue(project, ["ingest", "read"], name="factory")
        export(f"Bearer {raw}", f.request(*[s.span() for s in sent], service=SERVICE).SerializeToString(), "protobuf")
        get_writer().flush(force=True)
        materialize(project.id, sent[0].at - timedelta(hours=1), datetime.now(timezone.utc) + timedelta(minutes=5))
        yield Site(url=url, project=project, key_prefix=key.prefix, attempts=len(sent), diagnosis=None)


def test_an_slo_created_from_the_nav_is_listed_with_its_numbers_and_burn_down(browser, sent):
    browser.get("/")
    browser.wait_for_charts()
    browser.console_errors()
    browser.nav("SLOs")
    browser.wait(lambda d: d.find_element(By.CSS_SELECTOR, "nav a.active").get_attribute("textContent") == "SLOs",
                 "SLOs is not active")
    assert browser.driver.find_element(By.ID, "no-slos").is_displayed()

    form = browser.driver.find_element(By.ID, "create-slo")
    form.find_element(By.NAME, "service").clear()
    form.find_element(By.NAME, "service").send_keys(SERVICE)
    Select(form.find_element(By.NAME, "signal")).select_by_value("ttft")
    form.find_element(By.NAME, "threshold_ms").send_keys("1000")
    form.find_element(By.NAME, "objective").send_keys("0.99")
    Select(form.find_element(By.NAME, "window_days")).select_by_value("7")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    browser.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "section.slo"), "the new SLO is not listed")

    assert browser.wait_for_charts() == 1
    browser.screenshot("slos")
    assert browser.console_errors() == []
    main = browser.driver.find_element(By.TAG_NAME, "main")
    assert f"SLO {SERVICE}: 99% TTFT < 1 s (7 days) saved." in main.text
    # the numbers of the window ending at the filter bar's end, as worked out from what was sent
    end = datetime.strptime(re.search(r"ending at (\S+ \S+) UTC", main.text).group(1), "%Y-%m-%d %H:%M")
    end = end.replace(tzinfo=timezone.utc)
    expected = truth(sent, "ttft", 1000.0, end - timedelta(days=7), end)
    slo = main.find_element(By.CSS_SELECTOR, "section.slo")
    assert slo.find_element(By.CLASS_NAME, "compliance").text == fmt(expected.good / expected.measured, "nines")
    assert slo.find_element(By.CLASS_NAME, "budget").text == fmt(1 - expected.bad / (0.01 * expected.measured), "%")
    assert slo.find_element(By.CLASS_NAME, "counts").text == f"{expected.good} / {expected.bad}"
    share = fmt(expected.unmeasured / expected.requests, "%")
    assert f"TTFT not measured for {share} of requests" in slo.find_element(By.CLASS_NAME, "not-measured-note").text
    # the burn-down: a point at the end of each clock hour the 7 days touch (the first and last cut at the window's
    # start and end), drawn as a line ending at the budget remaining
    drawn = browser.js("""
        const el = document.querySelector('section.slo [data-chart]');
        return [el.data.map(t => t.name), el.data[0].x.length, el.data[0].y[el.data[0].y.length - 1],
                el.querySelectorAll('.scatterlayer .trace path.js-line').length];""")
    names, points, last, lines = drawn
    assert names == ["budget remaining", "budget spent"] and points == 7 * 24 + (end.minute > 0) and lines == 2
    assert last == pytest.approx(round((1 - expected.bad / (0.01 * expected.measured)) * 100, 3))
    text = main.text
    assert "None" not in text and "nan" not in text.lower().split()
