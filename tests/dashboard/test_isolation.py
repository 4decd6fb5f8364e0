"""Membership on every page: for each URL of dashboard/urls.py (read from urlpatterns, so a new page is covered
without touching this file), ann sees alpha, gets 404 for beta, ben never sees alpha's data, anonymous users
go to the login page, and the hostile strings of alpha's traffic only ever appear escaped."""
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from analysis.models import Incident
from dashboard import urls as dashboard_urls
from reports import sending
from reports.models import WeeklyReview
from store import client as ch
from tests import factories
from tests.dashboard.conftest import BETA_SECRET, HOSTILE_ROUTE, HOSTILE_TENANT, WINDOW

PAGES = [p.name for p in dashboard_urls.urlpatterns]
# pages that show no spans: their service name is only in the filter bar (the service map shows calls seen at two
# layers, which this traffic has none of: tests/dashboard/test_service_map_page.py checks its isolation)
NO_TRAFFIC_PAGES = {"keys", "budgets", "webhooks", "reviews", "service-map"}
REVIEW_WEEK = "2026-W02"  # the traffic's ISO week (f.BASE is Monday 2026-01-05)
# Pieces of the hostile strings that could only appear if one was rendered unescaped.
RAW_MARKUP = [HOSTILE_TENANT, HOSTILE_ROUTE, "<script>alert", "<img src=x", '"\'><img']


def run_id(project) -> str:
    rows = ch.query("SELECT min(run_id) AS first_run FROM request_buckets WHERE project_id = {p:UInt32} AND run_id != ''",
                    parameters={"p": project.pk})
    assert rows and rows[0]["first_run"], f"no run of {project.name} in request_buckets"
    return rows[0]["first_run"]


def review_week(project) -> str:
    """The week of the project's stored weekly review of its traffic, built on first use."""
    if not WeeklyReview.objects.filter(project=project, week=REVIEW_WEEK).exists():
        sending.send(project, REVIEW_WEEK)
    return REVIEW_WEEK


def incident_id(project) -> int:
    """A stored incident of the project's service (alpha-svc / beta-svc), made on first use."""
    service = f"{project.name}-svc"
    found = Incident.objects.filter(project=project, service=service).first()
    return (found or factories.incident(project, service, start=factories.BASE)).pk


def path_of(name: str, project) -> str:
    """The page's path; URL arguments filled with real values of `project` (add one here for a new kind)."""
    values = {"run_id": lambda: run_id(project), "week": lambda: review_week(project),
              "incident_id": lambda: incident_id(project)}
    converters = next(p for p in dashboard_urls.urlpatterns if p.name == name).pattern.converters
    missing = set(converters) - set(values)
    assert not missing, f"test_isolation does not know how to fill {missing} for page {name!r}"
    return reverse(name, kwargs={arg: values[arg]() for arg in converters})


def url(name: str, project, **params) -> str:
    return f"{path_of(name, project)}?{urlencode({'project': project.name, **WINDOW, **params})}"


def login(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def content(response) -> str:
    """What the page itself shows: below the shared header and filter bar (which list the services)."""
    return response.content.decode().split("<main>", 1)[-1]


def assert_no_raw_markup(html: str, where: str):
    for piece in RAW_MARKUP:
        assert piece not in html, f"{where}: unescaped {piece!r}"


def test_every_page_is_covered():
    """Guards the matrix itself: it must see the known pages, so an import or naming slip cannot empty it."""
    assert {"overview", "diagnosis-page", "scheduler", "connections", "tenants", "prompts", "runs", "run",
            "keys", "budgets", "webhooks", "reviews", "review"} <= set(PAGES)
    assert all(PAGES), "every dashboard URL needs a name, or this matrix cannot reach it"


@pytest.mark.parametrize("name", PAGES)
def test_membership_on_every_page(name, traffic, members):
    alpha, beta = traffic["alpha"], traffic["beta"]
    ann, ben = login(members["ann"][0]), login(members["ben"][0])
    for project in (alpha, beta):  # every page also shows (or shades, or counts) the project's incidents
        incident_id(project)

    # ann, her own project: the page answers with alpha's data and nothing of beta's.
    own = ann.get(url(name, alpha))
    html = own.content.decode()
    assert own.status_code == 200, f"{name}: ann on alpha answered {own.status_code}"
    assert "alpha-svc" in html, f"{name}: alpha's service missing from ann's page"
    if name not in NO_TRAFFIC_PAGES:
        assert "alpha-svc" in content(own), f"{name}: ann's page shows none of alpha's data"
    for secret in ("beta-svc", BETA_SECRET, "/v1/beta-only"):
        assert secret not in html, f"{name}: beta's {secret!r} on ann's alpha page"
    assert_no_raw_markup(html, f"{name} (ann, alpha)")

    # The hostile strings as filters (echoed into the filter bar, maybe into charts and tables): still text.
    filtered = ann.get(url(name, alpha, tenant=HOSTILE_TENANT, route=HOSTILE_ROUTE))
    assert filtered.status_code == 200, f"{name}: hostile filters answered {filtered.status_code}"
    assert escape(HOSTILE_TENANT) in filtered.content.decode()
    assert_no_raw_markup(filtered.content.decode(), f"{name} (ann, hostile filters)")

    # ann naming beta (whatever the path arguments are): 404, as for a project that does not exist.
    for project_path in (alpha, beta):
        other = ann.get(f"{path_of(name, project_path)}?{urlencode({'project': 'beta', **WINDOW})}")
        assert other.status_code == 404, f"{name}: ann on beta answered {other.status_code}"
        assert "beta-svc" not in other.content.decode() and BETA_SECRET not in other.content.decode()
    assert ann.get(f"{path_of(name, alpha)}?{urlencode({'project': 'no-such', **WINDOW})}").status_code == 404
    # ann on alpha with beta's path arguments (a run id of beta): whatever the status, none of beta's data.
    crossed = ann.get(f"{path_of(name, beta)}?{urlencode({'project': 'alpha', **WINDOW})}").content.decode()
    for secret in ("beta-svc", BETA_SECRET, "/v1/beta-only"):
        assert secret not in crossed, f"{name}: beta's {secret!r} on ann's page through beta's path arguments"

    # ben, his own project: beta's data, never alpha's service or hostile tenant.
    mine = ben.get(url(name, beta))
    html = mine.content.decode()
    assert mine.status_code == 200, f"{name}: ben on beta answered {mine.status_code}"
    assert "beta-svc" in html, f"{name}: beta's service missing from ben's page"
    if name not in NO_TRAFFIC_PAGES:
        assert "beta-svc" in content(mine), f"{name}: ben's page shows none of beta's data"
    for secret in ("alpha-svc", HOSTILE_TENANT, escape(HOSTILE_TENANT), escape(HOSTILE_ROUTE), 'value="alpha"'):
        assert secret not in html, f"{name}: alpha's {secret!r} on ben's page"
    # ben with no project named lands on his own; naming alpha is 404.
    default = ben.get(f"{path_of(name, beta)}?{urlencode(WINDOW)}")
    assert default.status_code == 200 and "alpha-svc" not in default.content.decode()
    assert ben.get(url(name, alpha)).status_code == 404

    # Anonymous: to the login page, coming back to the same URL afterwards.
    target = url(name, alpha)
    anonymous = Client().get(target)
    assert anonymous.status_code == 302, f"{name}: anonymous answered {anonymous.status_code}"
    location = urlparse(anonymous["Location"])
    assert location.path == "/login/" and parse_qs(location.query)["next"] == [target]


def test_read_api_with_a_session_is_membership_checked(traffic, members):
    ann, ben = login(members["ann"][0]), login(members["ben"][0])
    params = {**WINDOW, "service": "alpha-svc"}
    ok = ann.get("/api/v1/diagnosis", {**params, "project": "alpha"})
    assert ok.status_code == 200 and ok.json()["verdict"]
    assert ok.json()["evidence"]["buckets"]["t_queue"]["count"] == 40  # alpha's 40 attempts, not beta's 10

    for c, project, service in ((ann, "beta", "beta-svc"), (ben, "alpha", "alpha-svc")):
        response = c.get("/api/v1/diagnosis", {**WINDOW, "service": service, "project": project})
        assert (response.status_code, response.json()["error"]) == (404, "not_found")
        assert set(response.json()) == {"error", "message"}  # nothing of the other project's data

    anonymous = Client().get("/api/v1/diagnosis", {**params, "project": "alpha"})
    assert (anonymous.status_code, anonymous.json()["error"]) == (401, "missing_key")
