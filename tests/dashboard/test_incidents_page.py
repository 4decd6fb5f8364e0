"""The Incidents list, the incident page, and the incident bands and open-first verdicts on other pages: stored
Incident rows over the stored alpha traffic (tests/dashboard/conftest.py); isolation and hostile names."""
import html
from datetime import timedelta

import pytest

from analysis.models import WindowDiagnosis
from tests import factories as f
from tests.dashboard.conftest import END, START, WINDOW
from tests.dashboard.pages import by_header, chart, table, trace

pytestmark = pytest.mark.django_db
HOSTILE_SERVICE = '<script>alert("svc")</script>'
MIN = timedelta(minutes=1)


@pytest.fixture
def stored(traffic):
    """alpha: a closed queue_backlog incident of alpha-svc at 10:00 (20 min), an open network_overhead one of
    "search" since 10:30 scoped to a tenant, an older closed one at 09:58; beta: one of beta-svc."""
    alpha, beta = traffic["alpha"], traffic["beta"]
    return {"closed": f.incident(alpha, "alpha-svc", start=f.BASE),
            "open": f.incident(alpha, "search", start=f.BASE + 30 * MIN, open_=True, verdict="network_overhead",
                               scope=[{"dimension": "tenant", "value": "acme", "share": 0.93}]),
            "older": f.incident(alpha, "alpha-svc", start=f.BASE - 2 * MIN, minutes=1),
            "beta": f.incident(beta, "beta-svc", start=f.BASE)}


def test_list_shows_open_first_then_newest_with_their_summary(ann_client, stored):
    response = ann_client.get("/incidents/", {"project": "alpha", **WINDOW})
    assert response.status_code == 200
    body = response.content.decode()
    rows = by_header(table(body, "incidents"))
    assert [r["service"] for r in rows] == ["search", "alpha-svc", "alpha-svc"]
    ongoing, closed, older = rows
    assert table(body, "incidents").rows[0][2][1].startswith("ongoing · ")
    assert (closed["verdict"], closed["top cause"], closed["scope"]) == ("queue_backlog", "queue_backlog 82%",
                                                                         "service-wide")
    assert closed["duration"] == "20.0" and older["duration"] == "1.0"  # data-value: minutes
    assert ongoing["scope"] == "tenant=acme 93%"
    # peak TTFT 33.3 s against a 250 ms baseline
    assert closed["peak vs baseline"] == "TTFT p95 33.3 s vs 250 ms ×133"
    assert f'/incidents/{stored["closed"].pk}/?project=alpha' in body
    assert "beta-svc" not in body


def test_list_filters_by_service_and_window(ann_client, stored):
    body = ann_client.get("/incidents/", {"project": "alpha", "service": "alpha-svc", **WINDOW}).content.decode()
    assert [r["service"] for r in by_header(table(body, "incidents"))] == ["alpha-svc", "alpha-svc"]
    assert 'id="all-services"' in body
    later = {"start": "2026-01-05T10:21:00Z", "end": "2026-01-05T10:25:00Z"}
    body = ann_client.get("/incidents/", {"project": "alpha", "service": "alpha-svc", **later}).content.decode()
    assert 'id="no-incidents"' in body


def test_incident_page_draws_series_with_baseline_band_and_shaded_incident(ann_client, stored):
    incident = stored["closed"]
    response = ann_client.get(f"/incidents/{incident.pk}/", {"project": "alpha"})
    assert response.status_code == 200
    queue = chart(response, "series-t_queue")
    shapes = queue["layout"]["shapes"]
    shaded = next(s for s in shapes if s["name"] == "incident")
    assert (shaded["x0"], shaded["x1"]) == ("2026-01-05T10:00:00+00:00", "2026-01-05T10:20:00+00:00")
    band = next(s for s in shapes if s["name"] == "baseline p50–p95")
    assert (band["y0"], band["y1"]) == (20.0, 40.0)  # the factory's baseline t_queue p50 / p95
    assert trace(queue, "baseline p95")["y"] == [40.0, 40.0]
    measured = [y for y in trace(queue, "t_queue p95 per minute")["y"] if y is not None]
    assert measured and max(measured) <= 49  # the stored traffic's t_queue is 10..49 ms
    assert {"series-ttft", "series-total", "causes"} <= set(_chart_ids(response))
    causes = chart(response, "causes")
    assert causes["data"][0]["y"] == ["queue_backlog", "network_overhead"] and causes["data"][0]["x"] == [82.0, 11.0]
    body = response.content.decode()
    assert "t_queue p95 33 s vs baseline 40 ms: ×825" in body
    assert 'id="peak">TTFT p95 33.3 s vs 250 ms ×133' in body
    runs = table(body, "slowest-runs").rows
    assert runs and all(cells[0][1] for cells in runs)
    assert "/runs/" in body and "bucket=t_queue" in body  # the runs list ordered by the grown bucket


def test_open_incident_page_says_ongoing_and_charts_scope(ann_client, stored):
    response = ann_client.get(f"/incidents/{stored['open'].pk}/", {"project": "alpha"})
    assert 'id="incident-end">ongoing<' in response.content.decode()
    scope = chart(response, "scope")
    assert scope["data"][0]["y"] == ["tenant=acme"] and scope["data"][0]["x"] == [93.0]


def test_another_projects_incident_is_not_found(ann_client, ben, stored):
    assert ann_client.get(f"/incidents/{stored['beta'].pk}/", {"project": "alpha"}).status_code == 404
    assert ben.get(f"/incidents/{stored['closed'].pk}/", {"project": "beta"}).status_code == 404
    assert ben.get(f"/incidents/{stored['closed'].pk}/", {"project": "alpha"}).status_code == 404
    body = ben.get("/incidents/", {"project": "beta", **WINDOW}).content.decode()
    assert "alpha-svc" not in body and "beta-svc" in body


def test_hostile_service_name_is_text_everywhere(ann_client, traffic):
    hostile = f.incident(traffic["alpha"], HOSTILE_SERVICE, start=f.BASE, route='"><img src=x onerror=alert(1)>',
                         scope=[{"dimension": "tenant", "value": "<b>evil</b>", "share": 0.5}])
    for url in ("/incidents/", f"/incidents/{hostile.pk}/"):
        body = ann_client.get(url, {"project": "alpha", **WINDOW}).content.decode()
        assert HOSTILE_SERVICE not in body and "<img src=x" not in body and "<b>evil</b>" not in body
        assert html.escape(HOSTILE_SERVICE) in body
    scope = chart(ann_client.get(f"/incidents/{hostile.pk}/", {"project": "alpha"}), "scope")
    assert scope["data"][0]["y"] == ["tenant=&lt;b&gt;evil&lt;/b&gt;"]  # Plotly reads tags in labels: escaped


def test_overview_puts_open_incidents_first_and_never_calls_them_healthy(ann_client, traffic):
    alpha = traffic["alpha"]
    WindowDiagnosis.objects.create(project=alpha, service="alpha-svc", start=START, end=END, verdict="healthy",
                                   result={"verdict": "healthy", "path": []})
    body = ann_client.get("/", {"project": "alpha", **WINDOW}).content.decode()
    assert ">healthy</a>" in body
    opened = f.incident(alpha, "alpha-svc", start=f.BASE + 5 * MIN, open_=True, verdict="admission_gap")
    response = ann_client.get("/", {"project": "alpha", **WINDOW})
    body = response.content.decode()
    rows = table(body, "service-status").rows
    assert rows[0][0][1] == "alpha-svc" and rows[0][1][1] == "incident open: admission_gap"
    assert ">healthy</a>" not in body and f"/incidents/{opened.pk}/" in body
    band = next(s for s in chart(response, "ttft")["layout"]["shapes"] if s.get("legendgroup") == "incident")
    assert band["x0"] == "2026-01-05T10:05:00+00:00" and band["name"] == "incident: admission_gap (ongoing)"
    assert "shapes" not in chart(response, "stack-p50")["layout"]  # bands only on time axes


def test_scheduler_and_diagnosis_pages_shade_the_incidents(ann_client, stored):
    response = ann_client.get("/scheduler/", {"project": "alpha", "service": "alpha-svc", **WINDOW})
    names = [s.get("name") for s in chart(response, "backlog")["layout"]["shapes"]]
    assert names.count("incident: queue_backlog") == 2  # the 10:00 and the 09:58 ones
    response = ann_client.get("/diagnosis/", {"project": "alpha", "service": "alpha-svc", **WINDOW})
    timeline = chart(response, "incident-timeline")
    assert [s["x0"] for s in timeline["layout"]["shapes"]] == ["2026-01-05T09:58:00+00:00", "2026-01-05T10:00:00+00:00"]
    assert f"/incidents/{stored['closed'].pk}/" in response.content.decode()


def test_nav_links_to_the_incidents_of_every_service(ann_client, stored):
    body = ann_client.get("/", {"project": "alpha", "service": "alpha-svc", **WINDOW}).content.decode()
    assert 'href="/incidents/?project=alpha&amp;start=' in body


def _chart_ids(response) -> list[str]:
    import re

    return re.findall(r'data-chart="([^"]+)"', response.content.decode())


def test_incident_pages_route_picker_is_the_incidents_services(ann_client, stored):
    """The incident page sets its filters to the incident's service and window: its route picker is read after that,
    not with the filters of the URL (here another service, whose routes are none)."""
    incident = stored["closed"]
    body = ann_client.get(f"/incidents/{incident.pk}/", {"project": "alpha", "service": "search"}).content.decode()
    assert '<option value="/v1/chat/completions"' in body


def test_a_merged_incidents_page_redirects_to_the_survivor_and_a_retired_one_says_what_happened(ann_client, stored):
    from analysis.models import RetiredIncident
    alpha = stored["closed"].project
    merged = RetiredIncident.objects.create(id=stored["beta"].pk + 100, project=alpha, service="alpha-svc",
                                            start=f.BASE, verdict="queue_backlog", reason="merged",
                                            merged_into=stored["closed"].pk, message="merged")
    response = ann_client.get(f"/incidents/{merged.pk}/", {"project": "alpha"})
    assert response.status_code == 301
    assert response["Location"] == f"/incidents/{stored['closed'].pk}/?project=alpha"
    gone = RetiredIncident.objects.create(id=stored["beta"].pk + 101, project=alpha, service="alpha-svc",
                                          start=f.BASE, verdict="queue_backlog", reason="not_found",
                                          message="no longer found when its minutes were judged again")
    response = ann_client.get(f"/incidents/{gone.pk}/", {"project": "alpha"})
    body = response.content.decode()
    assert response.status_code == 410 and 'id="incident-gone"' in body
    assert "no longer found when its minutes were judged again" in body and "<nav" in body  # the site's navigation
    never = ann_client.get("/incidents/999999/", {"project": "alpha"})
    assert never.status_code == 404 and "No incident 999999 in alpha" in never.content.decode()
    assert "<nav" in never.content.decode()


def test_the_list_says_which_services_are_not_judged_yet(ann_client, stored):
    """The stored traffic was ingested and never judged: the list says so rather than 'no incident'; once the
    incidents step has judged it, it does not."""
    from datetime import datetime, timezone

    from analysis.incidents.jobs import judge_all
    body = ann_client.get("/incidents/", {"project": "alpha", **WINDOW, "service": "alpha-svc"}).content.decode()
    assert 'id="not-judged"' in body and "alpha-svc" in body
    judge_all(datetime.now(timezone.utc))
    body = ann_client.get("/incidents/", {"project": "alpha", **WINDOW, "service": "alpha-svc"}).content.decode()
    assert 'id="not-judged"' not in body


def test_overview_lists_the_ranges_incidents_and_violated_budgets_and_puts_them_before_any_verdict(ann_client,
                                                                                                   stored):
    """An incident closed within the range still gives its service the status "incident in range" (never its
    healthy verdict); a budget over its limit in its latest evaluated window is listed and gives its service the
    status "budget violated"."""
    from budgets.models import Budget, BudgetViolation
    alpha = stored["closed"].project
    for service in ("alpha-svc", "search"):
        WindowDiagnosis.objects.create(project=alpha, service=service, start=START, end=END, verdict="healthy",
                                       result={"verdict": "healthy", "path": []})
    stored["open"].delete()
    budget = Budget.objects.create(project=alpha, service="search", total_ms=2500, evaluated_until=END)
    BudgetViolation.objects.create(budget=budget, start=END - 15 * MIN, end=END, stage="total", percentile=95,
                                   measured_ms=8685.0, target_ms=2500.0, over_ms=6185.0, requests=300)
    response = ann_client.get("/", {"project": "alpha", **WINDOW})
    body = response.content.decode()
    rows = {r[0][1]: r[1][1] for r in table(body, "service-status").rows}
    assert rows["alpha-svc"] == "incident in range: queue_backlog" and rows["search"] == "budget violated"
    assert ">healthy</a>" not in body
    listed = body[body.index('id="incidents-in-range"'):body.index('id="budgets-violated"')]
    assert f"/incidents/{stored['closed'].pk}/" in listed and f"/incidents/{stored['older'].pk}/" in listed
    assert "queue_backlog 82%" in listed  # top cause with its share
    violated = body[body.index('id="budgets-violated"'):]
    assert "total p95 8.69 s of 2.5 s" in violated
    assert chart(response, "incident-strip")["data"][0]["y"] == ["alpha-svc", "alpha-svc"]


def test_run_ids_show_their_distinguishing_end_with_the_full_id_on_hover():
    from django.template import Context, Template
    ids = [f"run-78724300-chat-gateway-{k:06d}" for k in (412, 413)]
    rendered = [Template("{% load dashboard %}{{ i|short_id }}").render(Context({"i": i})) for i in ids]
    assert len(set(rendered)) == 2  # a cut-off start read the same for both
    assert all(len(r) == 24 and r.startswith("…") and r.endswith(i[-6:]) for r, i in zip(rendered, ids))
    assert Template("{% load dashboard %}{{ i|short_id }}").render(Context({"i": "run-1"})) == "run-1"
