"""GET /api/v1/incidents and /api/v1/incidents/<id>: auth as the diagnosis API, project isolation, the route and
tenant rules, ordering, an open incident's null end, 404s and parameter errors; what of the window is judged
(judged_until, pending, no_baseline), an unknown service, retired ids. Incidents are stored rows."""
from datetime import datetime, timedelta, timezone

import pytest
from django.contrib.auth.models import User

from projects.models import ApiKey
from tests import factories as f

URL = "/api/v1/incidents"
WINDOW = {"service": "chat", "start": "2026-01-05T09:00:00Z", "end": "2026-01-05T12:00:00Z"}
MIN = timedelta(minutes=1)


def get(client, key=None, url=URL, **params):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.get(url, {**WINDOW, **params} if url == URL else params, headers=headers)


@pytest.fixture(autouse=True)
def _store(clickhouse):
    """The answers read the span store (what is judged, whether the service exists): empty unless a test sends."""


@pytest.fixture
def stored(alpha, beta):
    """alpha/chat: one closed at 10:00 (20 min), one open since 11:00, one on 08:00 (before the window), one of
    another service; beta/chat: one at 10:30."""
    project = alpha[0]
    return {"closed": f.incident(project, "chat", start=f.BASE),
            "open": f.incident(project, "chat", start=f.BASE + 60 * MIN, open_=True, verdict="network_overhead"),
            "before": f.incident(project, "chat", start=f.BASE - 120 * MIN, minutes=30),
            "other": f.incident(project, "search", start=f.BASE),
            "beta": f.incident(beta[0], "chat", start=f.BASE + 30 * MIN)}


def test_read_key_lists_overlapping_incidents_oldest_first(client, alpha, stored):
    response = get(client, alpha[1])
    assert response.status_code == 200
    body = response.json()
    assert (body["service"], body["start"], body["end"]) == ("chat", "2026-01-05T09:00:00Z", "2026-01-05T12:00:00Z")
    assert [i["id"] for i in body["incidents"]] == [stored["closed"].pk, stored["open"].pk]
    closed, ongoing = body["incidents"]
    assert set(closed) == {"id", "start", "end", "verdict", "causes", "scope", "baseline", "peak", "path", "url",
                           "end_reason", "revisions"}
    # no span stored, nothing queued: the whole window is judged (ended before now)
    assert (body["judged_until"], body["pending"], body["no_baseline"]["minutes"]) == (body["end"], 0, 0)
    assert (closed["start"], closed["end"]) == ("2026-01-05T10:00:00Z", "2026-01-05T10:20:00Z")
    assert ongoing["end"] is None and ongoing["verdict"] == "network_overhead"
    assert set(closed["baseline"]) == {"start", "end", "buckets", "ttft", "total"}
    assert set(closed["peak"]) == {"buckets", "ttft", "total"}
    assert closed["causes"][0] == {"code": "queue_backlog", "share": 0.82}
    assert closed["path"][0]["comparison"] == "t_queue p95 33 s vs baseline 40 ms: ×825"
    assert closed["url"] == f"http://testserver/incidents/{stored['closed'].pk}/?project=alpha"


def test_window_edges_follow_overlap(client, alpha, stored):
    # 10:20 is the closed one's end: a window starting there no longer overlaps it; the open one reaches to now
    body = get(client, alpha[1], start="2026-01-05T10:20:00Z", end="2026-01-06T00:00:00Z").json()
    assert [i["id"] for i in body["incidents"]] == [stored["open"].pk]
    body = get(client, alpha[1], start="2026-01-05T08:29:00Z", end="2026-01-05T08:31:00Z").json()
    assert [i["id"] for i in body["incidents"]] == [stored["before"].pk]


def test_route_gives_its_own_and_service_wide_incidents_unless_scoped_elsewhere(client, alpha, db):
    project = alpha[0]
    on_route = f.incident(project, "chat", route="/v1/chat", start=f.BASE)
    wide = f.incident(project, "chat", start=f.BASE + MIN)
    named = f.incident(project, "chat", start=f.BASE + 2 * MIN,
                       scope=[{"dimension": "route", "value": "/v1/chat", "share": 0.9}])
    elsewhere = f.incident(project, "chat", start=f.BASE + 3 * MIN,
                           scope=[{"dimension": "route", "value": "/v1/embed", "share": 0.95}])
    other_route = f.incident(project, "chat", route="/v1/embed", start=f.BASE + 4 * MIN)
    ids = [i["id"] for i in get(client, alpha[1], route="/v1/chat").json()["incidents"]]
    assert ids == [on_route.pk, wide.pk, named.pk]
    everything = [i["id"] for i in get(client, alpha[1]).json()["incidents"]]
    assert everything == [on_route.pk, wide.pk, named.pk, elsewhere.pk, other_route.pk]


def test_tenant_leaves_out_incidents_scoped_to_other_tenants(client, alpha, db):
    project = alpha[0]
    wide = f.incident(project, "chat", start=f.BASE)
    acme = f.incident(project, "chat", start=f.BASE + MIN, scope=[{"dimension": "tenant", "value": "acme", "share": 0.9}])
    f.incident(project, "chat", start=f.BASE + 2 * MIN, scope=[{"dimension": "tenant", "value": "zeta", "share": 0.9}])
    ids = [i["id"] for i in get(client, alpha[1], tenant="acme").json()["incidents"]]
    assert ids == [wide.pk, acme.pk]


def test_one_incident_by_id(client, alpha, stored):
    response = get(client, alpha[1], url=f"{URL}/{stored['open'].pk}")
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["end"], body["service"], body["route"]) == (stored["open"].pk, None, "chat", "")
    assert body["url"].endswith(f"/incidents/{stored['open'].pk}/?project=alpha")


def test_another_projects_or_a_missing_incident_is_not_found(client, alpha, stored):
    for incident_id in (stored["beta"].pk, 999_999):
        response = get(client, alpha[1], url=f"{URL}/{incident_id}")
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"
    assert get(client, alpha[1], url=f"{URL}/abc").json()["error"] == "not_found"  # no such endpoint, JSON too


def test_beta_sees_only_its_own(client, beta, stored):
    body = get(client, beta[1]).json()
    assert [i["id"] for i in body["incidents"]] == [stored["beta"].pk]
    assert get(client, beta[1], project="alpha").status_code == 404


def test_member_session_reads_and_outsider_does_not(client, alpha, beta, stored):
    ann = User.objects.create_user("ann", password="x")
    alpha[0].members.add(ann)
    client.force_login(ann)
    assert len(get(client).json()["incidents"]) == 2
    ben = User.objects.create_user("ben", password="x")
    beta[0].members.add(ben)
    client.force_login(ben)
    assert get(client, project="alpha").status_code == 404
    assert get(client, url=f"{URL}/{stored['closed'].pk}", project="alpha").status_code == 404


def test_keys_without_read_scope_or_unknown_are_refused(client, alpha, stored):
    _, raw = ApiKey.issue(alpha[0], ["ingest"])
    assert get(client, raw).json()["error"] == "missing_scope"
    assert get(client, "lo_made_up").status_code == 401
    assert get(client).json()["error"] == "missing_key"


@pytest.mark.parametrize("params, reason", [
    ({"service": ""}, "missing_parameter"),
    ({"start": ""}, "missing_parameter"),
    ({"start": "yesterday"}, "bad_date"),
    ({"end": "2026-01-05T09:00:00Z"}, "bad_date"),
    ({"start": "2025-01-01T00:00:00Z"}, "window_too_large"),
])
def test_parameter_errors_as_the_diagnosis_api(client, alpha, stored, params, reason):
    response = get(client, alpha[1], **params)
    assert response.status_code == 400
    assert response.json()["error"] == reason and response.json()["message"]


def test_post_is_refused_as_json(client, alpha):
    response = client.post(URL, headers={"Authorization": f"Bearer {alpha[1]}"})
    assert response.status_code == 405 and response.json()["error"] == "method_not_allowed"


def test_an_unknown_service_is_404_naming_the_closest(client, alpha, stored):
    response = get(client, alpha[1], service="chta")
    assert response.status_code == 404 and response.json()["error"] == "unknown_service"
    # no span of it, but a stored incident: the service is known ("chat" has one here)
    assert get(client, alpha[1], service="search").status_code == 200


def test_an_unknown_service_is_named_closest_among_the_stored_spans(client, alpha, ingest):
    ingest(alpha[1], f.request(f.attempt(), service="chat-gateway"))
    response = get(client, alpha[1], service="chat-gatway")
    assert response.status_code == 404
    assert "'chat-gateway'" in response.json()["message"]


def test_minutes_not_judged_yet_are_pending_and_judged_until_stops_before_them(client, alpha, ingest):
    """Spans of 10:00-10:03 ingested and not judged: 3 minutes pending, judged_until 10:00 (the first of them); once
    judged (judge_all), nothing pending and the window judged to its end."""
    from analysis.incidents.jobs import judge_all
    from analysis.work.jobs import materialize_since_watermark
    for k in range(3):
        ingest(alpha[1], f.request(f.attempt(start_ns=f.BASE_NS + k * 60_000 * f.MS), service="chat"))
    body = get(client, alpha[1]).json()
    assert (body["incidents"], body["pending"], body["judged_until"]) == ([], 3, "2026-01-05T10:00:00Z")
    now = datetime.now(timezone.utc)
    materialize_since_watermark(now)
    judge_all(now)
    body = get(client, alpha[1]).json()
    assert (body["pending"], body["judged_until"]) == (0, "2026-01-05T12:00:00Z")
    # three minutes of one attempt each: too quiet to be judged against a baseline (no_baseline counts judged minutes)
    assert body["no_baseline"] == {"minutes": 0, "reason": None, "stretches": []}


def test_a_merged_incident_redirects_to_the_survivor_and_a_retired_one_is_gone(client, alpha, stored):
    from analysis.models import RetiredIncident
    project = alpha[0]
    RetiredIncident.objects.create(id=stored["before"].pk + 1000, project=project, service="chat", start=f.BASE,
                                   verdict="queue_backlog", reason="merged", merged_into=stored["closed"].pk,
                                   message="merged into incident #1")
    RetiredIncident.objects.create(id=stored["before"].pk + 1001, project=project, service="chat", start=f.BASE,
                                   verdict="queue_backlog", reason="not_found", message="no longer found")
    moved = get(client, alpha[1], url=f"{URL}/{stored['before'].pk + 1000}")
    assert moved.status_code == 301 and moved.json()["merged_into"] == stored["closed"].pk
    assert moved["Location"] == f"{URL}/{stored['closed'].pk}"
    gone = get(client, alpha[1], url=f"{URL}/{stored['before'].pk + 1001}")
    assert gone.status_code == 410 and gone.json()["reason"] == "not_found" and gone.json()["message"]
    # another project's retired id is not told apart from a missing one
    assert get(client, alpha[1], url=f"{URL}/999999").status_code == 404
