"""Real-browser tests: Debian's headless Chromium driven by selenium against a live server that holds one
simulated admission_gap incident (plus spans with hostile tenant and route values), built once per module.

Nothing is downloaded: the driver path is given explicitly, so Selenium Manager never runs.
"""
import base64
import io
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

os.environ.setdefault("SE_OFFLINE", "true")  # belt and braces: Selenium Manager must never fetch a browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"

SERVICE = "llm-gateway"
VERDICT = "admission_gap"
SIM_SEED = 11
USERNAME, PASSWORD = "carol", "pw-carol-browser"
HOSTILE_TENANT = "<script>window.__pwned=1</script>\"'"
HOSTILE_ROUTE = '"><img src=x onerror="window.__pwned=2">'
HOSTILE_SPANS = 12


@dataclass
class Site:
    url: str
    project: object
    key_prefix: str
    attempts: int  # attempts stored for SERVICE: the simulator's plus the hostile ones
    diagnosis: object  # the stored WindowDiagnosis


@pytest.fixture(scope="module")
def chromium():
    """Skip when Chromium is absent, unless LATENCY_OBS_REQUIRE_BROWSER is set (CI), where that is a failure."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        reason = f"{', '.join(missing)} missing: apt-get install chromium chromium-driver"
        if os.environ.get("LATENCY_OBS_REQUIRE_BROWSER"):
            pytest.fail(f"LATENCY_OBS_REQUIRE_BROWSER is set but {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def site(chromium, django_db_setup, django_db_blocker, clickhouse_schema):
    """A live server with committed data, shared by the module's tests.

    TRICKY: pytest-django's `live_server` fixture makes every test that uses it (even through a module fixture)
    transactional, and a transactional test flushes the database when it ends, which would drop the user and
    project after the first test. So this fixture runs its own LiveServer (same class, ephemeral port), commits
    its data with the DB blocker lifted for the whole module (the blocker is process-wide, so this also lets the
    server thread read), and flushes the database afterwards, exactly as a transactional test would, so later
    tests on this worker start empty.
    """
    with committed_live_server(django_db_blocker) as url:
        yield build_site(url)


@contextmanager
def committed_live_server(django_db_blocker):
    """The URL of a LiveServer over committed data (see `site` for why not `live_server`); the database is
    flushed and the span tables emptied before and after."""
    from django.core.management import call_command
    from pytest_django.live_server_helper import LiveServer

    def empty_tables():
        # every table: project ids start again at 1 after a flush, so rows an earlier module left in any table
        # (engine metrics, aggregates) would belong to this module's project
        from tests.stored import empty_store

        empty_store()

    with django_db_blocker.unblock():
        empty_tables()
        server = LiveServer("localhost")
        server._live_server_modified_settings.enable()
        try:
            yield server.url
        finally:
            server._live_server_modified_settings.disable()
            server.stop()
            call_command("flush", interactive=False, verbosity=0)
            empty_tables()


def build_site(url: str) -> Site:
    """One member, one project, 15 simulated minutes of admission_gap traffic through the real OTLP endpoint,
    hostile spans in the same service, all materialized, and the window diagnosed and stored."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from analysis.rollups.materialize import materialize
    from analysis.work.jobs import diagnose_window
    from ingest import metrics
    from ingest.pipeline import export, get_writer
    from projects.models import ApiKey, Project
    from tests import factories as f

    user = User.objects.create_user(USERNAME, password=PASSWORD)
    project = Project.objects.create(name="browser-lab")
    project.members.add(user)
    key, raw = ApiKey.issue(project, ["ingest", "read"], name="simulator")

    out = io.StringIO()
    call_command("simulate", scenario=VERDICT, duration="15m", endpoint=f"{url}/v1/traces", key=raw,
                 seed=SIM_SEED, stdout=out)
    simulated = int(re.search(r"(\d+) attempts", out.getvalue()).group(1))  # "...: N runs, M attempts, ..."

    now_ns = datetime.now(timezone.utc).timestamp() * 1e9
    hostile = [f.attempt(t_queue_ms=40.0, tenant=HOSTILE_TENANT, route=HOSTILE_ROUTE,
                         start_ns=int(now_ns - 300e9 + i * 1e9)) for i in range(HOSTILE_SPANS)]
    export(f"Bearer {raw}", f.request(*hostile, service=SERVICE).SerializeToString(), "protobuf")
    get_writer().flush(force=True)
    metrics.get_writer().flush(force=True)  # the simulate command sent the engine's metrics too

    end = datetime.now(timezone.utc).replace(second=0, microsecond=0) + timedelta(minutes=1)
    materialize(project.id, end - timedelta(hours=2), end + timedelta(minutes=5))
    diagnosis = diagnose_window(project.id, SERVICE, end - timedelta(minutes=20), end)
    return Site(url=url, project=project, key_prefix=key.prefix, attempts=simulated + HOSTILE_SPANS,
                diagnosis=diagnosis)


@pytest.fixture(scope="module")
def driver(chromium):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    chrome.set_page_load_timeout(60)
    yield chrome
    chrome.quit()


class Browser:
    """The shared Chromium, with the few moves the tests make."""

    def __init__(self, driver, site: Site):
        self.driver, self.site = driver, site

    def get(self, path: str) -> None:
        self.console_errors()  # drop what earlier pages logged
        self.driver.get(self.site.url + path)

    def login(self, username=USERNAME, password=PASSWORD) -> None:
        """Through the real form: type, submit, wait to leave the login page."""
        from selenium.webdriver.common.by import By

        self.driver.find_element(By.NAME, "username").send_keys(username)
        self.driver.find_element(By.NAME, "password").send_keys(password)
        self.driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
        self.wait(lambda d: "/login/" not in d.current_url, "login did not leave the login page")

    def nav(self, link_text: str) -> None:
        """Click a link of the top bar, opening the menu (Alerting, Project) that holds it first."""
        from selenium.webdriver.common.by import By

        link = self.driver.find_element(By.XPATH, f"//header//nav//a[normalize-space()='{link_text}']")
        if not link.is_displayed():
            menu = link.find_element(By.XPATH, "./ancestor::details[1]")
            menu.find_element(By.TAG_NAME, "summary").click()
        link.click()

    def wait(self, condition, message: str, timeout: float = 30):
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout).until(condition, message)

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def wait_for_charts(self) -> int:
        """Wait until every [data-chart] holds a Plotly .main-svg; returns how many charts the page has."""
        self.wait(lambda d: d.execute_script("return document.readyState") == "complete", "page did not load")
        self.wait(lambda d: d.execute_script(
            "return Array.from(document.querySelectorAll('[data-chart]')).every(el => el.querySelector('.main-svg'))"),
            "some [data-chart] never got a Plotly .main-svg")
        return self.js("return document.querySelectorAll('[data-chart]').length")

    def console_errors(self) -> list[dict]:
        """SEVERE browser console entries since the last call (JS errors, failed loads)."""
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]

    def screenshot(self, name: str) -> Path:
        """The whole page (not only the viewport) as test-artifacts/screenshots/<name>.png."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        size = self.js("return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}})
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


@pytest.fixture
def anonymous(driver, site):
    """The shared browser with no session."""
    driver.get(site.url + "/login/")
    driver.delete_all_cookies()
    return Browser(driver, site)


@pytest.fixture
def browser(driver, site):
    """The shared browser, logged in as the project's member through the login form (once, while the session
    cookie lasts: the logout and anonymous tests drop it)."""
    browser = Browser(driver, site)
    if driver.get_cookie("sessionid") is None:
        browser.get("/login/?next=/keys/")  # a light page to land on
        browser.login()
    return browser
