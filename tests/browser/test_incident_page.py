"""The incident page in a real browser (tests/browser/conftest.py: the simulated admission_gap service): its
per-minute series drawn with the incident shaded and the baseline band, the causes bars, and a clean console."""
from datetime import datetime, timedelta, timezone

import pytest
from selenium.webdriver.common.by import By

from tests.browser.conftest import SERVICE

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(scope="module")
def stored_incident(site, django_db_blocker):
    """An open admission_gap incident over the simulated traffic's last 10 minutes, committed (the live server
    reads in its own connection), deleted afterwards."""
    from tests import factories as f

    start = datetime.now(timezone.utc).replace(second=0, microsecond=0) - timedelta(minutes=10)
    with django_db_blocker.unblock():
        row = f.incident(site.project, SERVICE, start=start, open_=True, verdict="admission_gap",
                         scope=[{"dimension": "instance", "value": "gw-1", "share": 0.8}])
    yield row
    with django_db_blocker.unblock():
        row.delete()


def test_incident_page_draws_its_series_with_the_incident_shaded(browser, stored_incident):
    browser.get(f"/incidents/{stored_incident.pk}/?project={browser.site.project.name}")
    charts = browser.wait_for_charts()
    browser.screenshot("incident")
    assert charts >= 5  # t_queue, ttft and total series, causes, scope
    assert browser.driver.find_element(By.TAG_NAME, "h1").text.startswith("Incident")
    assert browser.driver.find_element(By.ID, "incident-end").text == "ongoing"
    drawn = browser.js("""
        const el = document.getElementById('series-t_queue-plot');
        const named = (el._fullLayout.shapes || []).map(s => s.name);
        return [named, el.querySelectorAll('.shapelayer path').length,
                el.querySelectorAll('.scatterlayer .trace').length];""")
    names, shape_paths, traces = drawn
    assert "incident" in names and "baseline p50–p95" in names
    assert shape_paths >= 2 and traces >= 2  # both rectangles painted; the series and the baseline line
    assert browser.console_errors() == []


def test_incidents_list_links_to_the_page(browser, stored_incident):
    browser.get(f"/incidents/?project={browser.site.project.name}&range=1h")
    browser.wait_for_charts()
    row = browser.driver.find_element(By.CSS_SELECTOR, f'tr[data-incident="{stored_incident.pk}"]')
    assert "ongoing" in row.text and "admission_gap" in row.text
    row.find_element(By.PARTIAL_LINK_TEXT, ":").click()
    browser.wait(lambda d: f"/incidents/{stored_incident.pk}/" in d.current_url, "the row did not open the incident")
    assert browser.console_errors() == []


def test_the_overview_lists_the_incident_and_puts_it_first_in_the_services_status(browser, stored_incident):
    """The Overview is the team's home: an open incident is the service's status and a line of the range's
    incidents, linked to its page (with verdict, top cause and duration), whatever the latest verdict says."""
    browser.get(f"/?project={browser.site.project.name}&range=1h")
    browser.wait_for_charts()
    line = browser.driver.find_element(By.CSS_SELECTOR, f'#incidents-in-range li[data-incident="{stored_incident.pk}"]')
    assert SERVICE in line.text and "admission_gap" in line.text and "open" in line.text
    assert "top cause" in line.text and "min" in line.text
    status = browser.driver.find_element(By.CSS_SELECTOR, f'#service-status tr[data-service="{SERVICE}"]')
    assert status.get_attribute("data-kind") == "incident open" and "admission_gap" in status.text
    # the strip on the time axis draws it too
    assert browser.js("return document.querySelector('[data-chart=\"incident-strip\"]') !== null")
    browser.screenshot("overview-with-incident")
    line.find_element(By.TAG_NAME, "a").click()
    browser.wait(lambda d: f"/incidents/{stored_incident.pk}/" in d.current_url, "the line did not open the incident")
    assert browser.console_errors() == []
