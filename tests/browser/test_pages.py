"""Every dashboard page in a real browser, on a simulated admission_gap incident: charts drawn by Plotly, no
console errors, the expected verdict highlighted, hostile tenant and route values shown as text, never run.
Screenshots land in test-artifacts/screenshots/."""
import re
from datetime import datetime
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.browser.conftest import HOSTILE_ROUTE, HOSTILE_SPANS, HOSTILE_TENANT, SERVICE, SIM_SEED, VERDICT

# django_db makes pytest-django create the test database; each test then reads in a transaction of its own,
# while the module's data (tests/browser/conftest.py: site) was committed before, outside any test.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

# nav link text -> (screenshot name, the h1 starts with, at least this many charts)
PAGES = {
    "Overview": ("overview", "Overview", 5),
    "Diagnosis": ("diagnosis", "Diagnosis", 0),
    "Scheduler": ("scheduler", "Scheduler", 1),
    "Connections": ("connections", "Connections", 1),
    "Engine": ("engine", "Engine", 1),
    "Tenants": ("tenants", "Tenants", 1),
    "Prompts": ("prompts", "Prompt length", 1),
    "Runs": ("runs", "Runs", 0),
    "Keys": ("keys", "API keys", 0),
}
# JS that an injected tenant or route would have run or created
INJECTED = "return [typeof window.__pwned, document.querySelectorAll('img[src=\"x\"]').length]"


def open_from_nav(browser, link_text: str) -> None:
    """Start on the Overview and follow the nav link, as a user would (so the link must keep the filters)."""
    browser.get("/")
    browser.wait_for_charts()
    browser.console_errors()
    browser.nav(link_text)
    browser.wait(lambda d: d.find_element(By.CSS_SELECTOR, "nav a.active").get_attribute("textContent") == link_text,
                 f"{link_text} did not become the active page")


def check_page(browser, name: str, h1: str, min_charts: int) -> None:
    """What every page owes: its title, its charts drawn, a clean console, no injected script; then a screenshot."""
    charts = browser.wait_for_charts()
    browser.screenshot(name)
    assert browser.driver.find_element(By.TAG_NAME, "h1").text.startswith(h1)
    assert charts >= min_charts, f"{name}: {charts} charts"
    assert browser.console_errors() == []
    assert browser.js(INJECTED) == ["undefined", 0]


@pytest.mark.parametrize("link_text", list(PAGES))
def test_page_draws_its_charts_without_console_errors(browser, link_text):
    name, h1, min_charts = PAGES[link_text]
    open_from_nav(browser, link_text)
    check_page(browser, name, h1, min_charts)
    PAGE_CHECKS[name](browser)


def overview(browser):
    """The simulated service has its stored verdict as its status, and the attempt count is every attempt sent."""
    row = browser.driver.find_element(By.XPATH, f"//table[@id='service-status']//tr[td[1]='{SERVICE}']")
    assert row.find_element(By.CSS_SELECTOR, "a.verdict").text == VERDICT
    requests = browser.driver.find_element(By.XPATH, "//span[@class='stat'][starts-with(., 'attempts')]/b").text
    assert int(requests) == browser.site.attempts


def diagnosis(browser):
    assert_verdict_highlighted(browser)


def tenants(browser):
    """The hostile tenant is listed as its literal text, next to the simulator's tenants."""
    names = [a.text for a in browser.driver.find_elements(By.CSS_SELECTOR, "main table td:first-child a:first-child")]
    assert HOSTILE_TENANT in names
    assert {"acme", "globex", "initech"} <= set(names)


def runs(browser):
    """Runs are listed and link to their own page."""
    links = run_links(browser)
    assert links and all(f"/runs/run-{SIM_SEED}-{SERVICE}-" in a.get_attribute("href") for a in links[:20])


def keys(browser):
    table = browser.driver.find_element(By.ID, "keys").text
    assert f"{browser.site.key_prefix}…" in table and "simulator" in table


def scheduler(browser):
    """The admission_gap signature: slots sat idle under backlog; the factory instance without a cap is named."""
    assert float(browser.driver.find_element(By.ID, "gap-fraction").text) >= 0.5
    assert "(gw-1)" in browser.driver.find_element(By.ID, "uncapped").text


def connections(browser):
    """No churn in this incident, and every attempt is counted."""
    assert float(browser.driver.find_element(By.ID, "per-success").text) < 0.25
    assert f"({browser.site.attempts} attempts)" in browser.driver.find_element(By.TAG_NAME, "main").text


def prompts(browser):
    """The prompt-length segments together hold every attempt (all carry input tokens)."""
    cells = browser.driver.find_elements(By.XPATH, "//table[@id='segments']//tr[td[1]='requests']/td[@data-value]")
    assert sum(int(td.get_attribute("data-value")) for td in cells) == browser.site.attempts


def engine(browser):
    """The simulated engine's metrics: a chart per signal, a line per instance, the legend beside the plot and
    never over it; cards with their units."""
    assert browser.driver.find_element(By.ID, "sources").text == "vllm, dcgm, process, kube-state"
    charts = browser.js(ENGINE_CHARTS)
    assert {"engine-ttft", "engine-kv", "engine-requests", "engine-gpu", "engine-memory"} <= set(charts), charts
    for name, (traces, legend, plot) in charts.items():
        assert traces >= 1, name
        if legend:
            assert legend[0] >= plot[2] - 1 or legend[3] <= plot[1] + 1, (name, legend, plot)  # right of or above
    assert browser.driver.find_element(By.ID, "kv").text.endswith("%")
    assert re.fullmatch(r"[\d.]+ of [\d.]+ GiB \(\d+(\.\d)?%\)", browser.driver.find_element(By.ID, "fb").text)
    assert browser.driver.find_element(By.ID, "preemptions").text.endswith("per min")


# Per engine chart: its traces, its legend's box and its plot area's box ([left, top, right, bottom]).
ENGINE_CHARTS = """
const box = el => { if (!el) return null; const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
return Object.fromEntries(Array.from(document.querySelectorAll('[data-chart^="engine-"]')).map(el => [
  el.dataset.chart, [el.querySelector('.main-svg') ? el.data.length : 0, box(el.querySelector('.legend')),
                     box(el.querySelector('.nsewdrag'))]]));
"""


PAGE_CHECKS = {"overview": overview, "diagnosis": diagnosis, "scheduler": scheduler, "connections": connections,
               "engine": engine, "tenants": tenants, "prompts": prompts, "runs": runs, "keys": keys}


def run_links(browser):
    return browser.driver.find_elements(By.CSS_SELECTOR, "main a[href*='/runs/run-']")


def assert_verdict_highlighted(browser):
    """The flowchart marks exactly one verdict as reached, and it is the simulated cause."""
    reached = browser.driver.find_elements(By.CSS_SELECTOR, "svg [data-verdict].reached")
    assert [el.get_attribute("data-verdict") for el in reached] == [VERDICT]


def test_run_detail_opens_from_the_runs_list(browser):
    open_from_nav(browser, "Runs")
    browser.wait_for_charts()
    link = run_links(browser)[0]
    run_id = urlparse(link.get_attribute("href")).path.rstrip("/").rsplit("/", 1)[1]
    link.click()
    browser.wait(lambda d: urlparse(d.current_url).path == f"/runs/{run_id}/", "the run link did not open its page")
    check_page(browser, "run", "Run", 1)  # the waterfall
    assert run_id in browser.driver.find_element(By.TAG_NAME, "main").text


def test_overview_verdict_opens_the_stored_diagnosis(browser):
    browser.get("/")
    browser.wait_for_charts()
    browser.driver.find_element(By.CSS_SELECTOR, f"#service-status a.verdict.{VERDICT}").click()
    browser.wait(lambda d: "window=" in d.current_url, "the verdict link did not open the diagnosis")
    assert parse_qs(urlparse(browser.driver.current_url).query)["window"] == [str(browser.site.diagnosis.pk)]
    check_page(browser, "diagnosis-stored", "Diagnosis", 0)
    assert_verdict_highlighted(browser)


def test_hostile_route_is_text_in_the_route_selector_and_the_charts(browser):
    browser.get("/")
    browser.wait_for_charts()
    options = [o.text for o in Select(browser.driver.find_element(By.NAME, "route")).options]
    assert HOSTILE_ROUTE in options
    # Plotly reads some HTML in labels: the per-route chart must show the route literally, as text
    assert HOSTILE_ROUTE in browser.driver.find_element(By.CSS_SELECTOR, "[data-chart=stack-p50] .main-svg").text
    assert browser.js(INJECTED) == ["undefined", 0]


def test_hostile_filters_render_as_text(browser):
    """Selecting the hostile route and tenant puts them in the URL and on the page, as text only."""
    browser.get("/")
    browser.wait_for_charts()
    Select(browser.driver.find_element(By.NAME, "route")).select_by_visible_text(HOSTILE_ROUTE)
    browser.wait(lambda d: "route=" in d.current_url, "choosing a route did not reload the page")
    tenant = browser.driver.find_element(By.NAME, "tenant")
    tenant.send_keys(HOSTILE_TENANT)
    browser.driver.find_element(By.CSS_SELECTOR, "#filters button[type=submit]").click()
    # TRICKY: not "tenant=" in the URL: the route's reload already carries an empty tenant= from the form
    browser.wait(lambda d: parse_qs(urlparse(d.current_url).query).get("tenant") == [HOSTILE_TENANT],
                 "applying the tenant did not reload the page")
    query = parse_qs(urlparse(browser.driver.current_url).query)
    assert (query["route"], query["tenant"]) == ([HOSTILE_ROUTE], [HOSTILE_TENANT])
    charts = browser.wait_for_charts()
    browser.screenshot("overview-hostile-filters")
    assert charts == 5
    heading = browser.driver.find_element(By.CSS_SELECTOR, "h1 small").text
    assert HOSTILE_ROUTE in heading and f"tenant {HOSTILE_TENANT}" in heading
    requests = browser.driver.find_element(By.XPATH, "//span[@class='stat'][starts-with(., 'attempts')]/b").text
    assert int(requests) == HOSTILE_SPANS  # only the hostile spans carry both values
    assert browser.console_errors() == []
    assert browser.js(INJECTED) == ["undefined", 0]


def test_hostile_tenant_opens_its_runs_as_text(browser):
    """Following the hostile tenant from the Tenants page filters the Runs page by exactly that string."""
    browser.get("/tenants/")
    browser.wait_for_charts()
    browser.driver.find_element(By.LINK_TEXT, HOSTILE_TENANT).click()
    browser.wait(lambda d: urlparse(d.current_url).path == "/runs/", "the tenant link did not open its runs")
    assert parse_qs(urlparse(browser.driver.current_url).query)["tenant"] == [HOSTILE_TENANT]
    rows = browser.driver.find_elements(By.CSS_SELECTOR, "main table tbody tr")
    assert len(rows) == HOSTILE_SPANS  # one run per hostile span: the factory gives each its own trace
    assert {row.find_elements(By.TAG_NAME, "td")[2].text for row in rows} == {HOSTILE_TENANT}
    assert {row.find_elements(By.TAG_NAME, "td")[3].text for row in rows} == {HOSTILE_ROUTE}
    assert browser.console_errors() == []
    assert browser.js(INJECTED) == ["undefined", 0]


def test_range_filter_round_trips_through_the_url(browser):
    browser.get("/scheduler/")
    browser.wait_for_charts()
    old_form = browser.driver.find_element(By.ID, "filters")
    Select(browser.driver.find_element(By.NAME, "range")).select_by_value("6h")
    browser.wait(lambda d: "range=6h" in d.current_url, "the range change did not reach the URL")
    browser.wait(lambda d: _stale(old_form), "the page did not reload")
    query = parse_qs(urlparse(browser.driver.current_url).query)
    assert query["range"] == ["6h"] and query["service"] == [SERVICE] and "start" not in query
    assert urlparse(browser.driver.current_url).path == "/scheduler/"
    assert Select(browser.driver.find_element(By.NAME, "range")).first_selected_option.get_attribute("value") == "6h"
    window = browser.driver.find_element(By.CSS_SELECTOR, "#filters .window").text  # "2026-.. 04:01 – 2026-.. 10:01 UTC"
    start, end = (part.strip().removesuffix(" UTC") for part in window.split("–"))
    assert (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() == 6 * 3600
    browser.wait_for_charts()
    assert browser.console_errors() == []


def _stale(element) -> bool:
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True


def test_logging_in_returns_to_the_requested_page(anonymous):
    anonymous.get("/tenants/")
    anonymous.wait(lambda d: urlparse(d.current_url).path == "/login/", "anonymous user was not sent to log in")
    assert parse_qs(urlparse(anonymous.driver.current_url).query)["next"] == ["/tenants/"]
    anonymous.login()
    assert urlparse(anonymous.driver.current_url).path == "/tenants/"
    assert anonymous.driver.find_element(By.CSS_SELECTOR, "header .who").text == "carol"


def test_logging_out_then_opening_a_page_asks_to_log_in(browser):
    browser.get("/connections/")
    browser.driver.find_element(By.CSS_SELECTOR, "header form button").click()
    browser.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "header .who"), "still logged in after Log out")
    browser.get("/connections/")
    browser.wait(lambda d: urlparse(d.current_url).path == "/login/", "a logged-out user saw a page")
    assert parse_qs(urlparse(browser.driver.current_url).query)["next"] == ["/connections/"]
    assert browser.driver.find_elements(By.NAME, "password")


def test_the_diagnosis_answers_first_within_900_px_at_1440_by_900(browser):
    """The verdict, the path with its values and the fixes start within the first 900 px of a 1440 x 900 window;
    the flowchart and the evidence come after them."""
    browser.driver.set_window_size(1440, 900)
    try:
        browser.get(f"/diagnosis/?window={browser.site.diagnosis.pk}")
        browser.wait(lambda d: d.find_elements(By.ID, "fixes"), "the diagnosis page did not load")
        tops = {name: browser.js(f"return document.getElementById('{name}').getBoundingClientRect().top + "
                                 "window.scrollY") for name in ("verdict", "path", "fixes", "flowchart")}
        assert max(tops["verdict"], tops["path"], tops["fixes"]) < 900, tops
        assert tops["flowchart"] > tops["path"], tops
        browser.screenshot("diagnosis-1440x900")
    finally:
        browser.driver.set_window_size(1400, 1000)


def test_the_overview_lists_the_ranges_incidents_and_budgets(browser):
    browser.get("/")
    browser.wait(lambda d: d.find_elements(By.ID, "service-status"), "the overview did not load")
    for name in ("incidents-in-range", "budgets-violated", "service-status"):
        assert browser.driver.find_element(By.ID, name).is_displayed(), name


def test_the_bar_holds_every_link_and_log_out_on_one_row_at_1440(browser):
    browser.driver.set_window_size(1440, 900)
    try:
        browser.get("/")
        browser.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "header.top nav a"), "the overview did not load")
        brand, logout = (browser.driver.find_element(By.CSS_SELECTOR, css).rect
                         for css in ("header.top .brand", "header.top form button"))
        assert abs((logout["y"] + logout["height"] / 2) - (brand["y"] + brand["height"] / 2)) < 10, (brand, logout)
        # every link and menu of the nav on one row
        tops = {round(el.rect["y"]) for el in browser.driver.find_elements(
            By.CSS_SELECTOR, "header.top nav > a, header.top nav > details > summary")}
        assert len(tops) == 1, tops
        icon = browser.js("return document.querySelector('link[rel=icon]').href")
        assert icon.endswith("favicon.svg")
        assert browser.js(f"return fetch('{icon}').then(r => r.status)") == 200
    finally:
        browser.driver.set_window_size(1400, 1000)


# Pages whose numbers must read as users read them; each opened on the simulated service.
NUMBER_PAGES = ("/", "/diagnosis/", "/scheduler/", "/connections/", "/engine/", "/tenants/", "/prompts/", "/runs/")


@pytest.mark.parametrize("path", NUMBER_PAGES)
def test_numbers_read_with_their_units_never_raw(browser, path):
    """No "None", no scientific notation, no float printed with its full precision ("45995.975889500005")."""
    browser.get(f"{path}?service={SERVICE}")
    browser.wait_for_charts()
    text = browser.driver.find_element(By.TAG_NAME, "main").text
    assert not re.search(r"\bNone\b", text), path
    raw = re.findall(r"\d\.\d{4,}|\d[eE][+-]\d", text)
    assert raw == [], (path, raw)
    ticks = browser.js("return Array.from(document.querySelectorAll('.main-svg .ytick text, .main-svg .y2tick text'))"
                       ".map(t => t.textContent)")
    assert not [t for t in ticks if re.search(r"\.\d{3,}", t)], (path, ticks)


def test_a_handful_of_runs_gets_no_verdict(browser, settings):
    """The sample guard through the page: with fewer runs than ANALYSIS_MIN_RUNS the verdict is
    insufficient_data and the page says how many runs it had and how many a verdict needs."""
    settings.ANALYSIS_MIN_RUNS = 100_000  # the live server's thread reads the same settings
    browser.get(f"/diagnosis/?service={SERVICE}&range=6h")  # a window no other test caches (diagnosis.live)
    browser.wait(lambda d: d.find_elements(By.ID, "verdict"), "the diagnosis page did not load")
    assert "insufficient_data" in browser.driver.find_element(By.ID, "verdict").text
    assert re.search(r"\d+ runs; a verdict needs 100000", browser.driver.find_element(By.TAG_NAME, "main").text)
    browser.screenshot("diagnosis-sample-guard")


def test_the_engine_instance_picker_narrows_the_charts(browser):
    browser.get(f"/engine/?service={SERVICE}")
    browser.wait_for_charts()
    picker = Select(browser.driver.find_element(By.CSS_SELECTOR, "#instance-picker select"))
    every = browser.js("return document.getElementById('engine-kv-plot').data.length")
    choice = picker.options[1].get_attribute("value")
    picker.select_by_value(choice)
    browser.wait(lambda d: f"instance={choice}" in d.current_url, "choosing an instance did not reload the page")
    browser.wait_for_charts()
    names = browser.js("return document.getElementById('engine-kv-plot').data.map(t => t.name)")
    assert names == [choice] and every > 1, (names, every)
    assert browser.console_errors() == []


def test_an_alert_rule_is_added_and_muted_from_the_nav(browser):
    """Alert rules in the dashboard: reached from the nav, added through the form, muted with its button."""
    browser.get("/")
    browser.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "header nav"), "no nav")
    browser.nav("Alerts")
    browser.wait(lambda d: d.find_elements(By.ID, "alert-rule-form"), "the Alerts page did not open")
    form = browser.driver.find_element(By.ID, "alert-rule-form")
    form.find_element(By.NAME, "name").send_keys("slow first token")
    Select(form.find_element(By.NAME, "kind")).select_by_value("percentile")
    form.find_element(By.NAME, "service").send_keys(SERVICE)
    Select(form.find_element(By.NAME, "bucket")).select_by_value("ttft")
    threshold = form.find_element(By.NAME, "threshold")
    threshold.clear()
    threshold.send_keys("1500")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    browser.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "tr[id^=rule-]"), "the rule was not listed")
    row = browser.driver.find_element(By.CSS_SELECTOR, "tr[id^=rule-]")
    assert "slow first token" in row.text and "ttft p95 > 1.5 s" in row.text, row.text
    row.find_element(By.CSS_SELECTOR, "button[value=mute]").click()
    browser.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "tr[id^=rule-] button[value=unmute]"),
                 "the rule was not muted")
    assert browser.console_errors() == []
    browser.screenshot("alert-rules")  # the module's data (this rule with it) is flushed after the module
