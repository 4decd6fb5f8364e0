"""analysis.reads.lookups: the pickers' services and routes (bounded, searchable), and the latest attempt for the empty state."""
from datetime import timedelta

from analysis.reads import lookups
from analysis.scope import Scope
from tests import factories as f
from tests.analysis.test_queries import DAY, SVC, buckets, send  # noqa: F401 (fixtures)

WINDOW = (f.BASE - DAY, f.BASE + DAY)


def test_services_and_routes_busiest_first(send):
    pid = send(f.request(f.attempt(route="/b"), f.attempt(route="/a"), f.attempt(route="/a")),
               f.request(f.attempt(), service="embedder"))
    assert lookups.services(Scope(pid, "", *WINDOW)) == [{"service": SVC, "requests": 3}, {"service": "embedder", "requests": 1}]
    routes = lookups.route_choices(Scope(pid, SVC, *WINDOW))
    assert routes.values == [{"value": "/a", "requests": 2}, {"value": "/b", "requests": 1}]
    assert (routes.matching, routes.more) == (2, 0)
    assert lookups.services(Scope(pid, "", f.BASE + DAY, f.BASE + 2 * DAY)) == []


def test_a_picker_lists_the_busiest_and_the_selected_one_and_counts_the_rest(send):
    # svc-0 .. svc-5 with 6, 5, ... 1 attempts: the 3 busiest are svc-0, svc-1, svc-2
    pid = send(*[f.request(*[f.attempt() for _ in range(6 - i)], service=f"svc-{i}") for i in range(6)])
    top = lookups.service_choices(Scope(pid, "", *WINDOW), limit=3)
    assert [v["value"] for v in top.values] == ["svc-0", "svc-1", "svc-2"]
    assert (top.matching, top.more) == (6, 3)
    # the selected one is shown wherever it ranks, after the 3 busiest
    picked = lookups.service_choices(Scope(pid, "", *WINDOW), selected="svc-5", limit=3)
    assert picked.values == [{"value": "svc-0", "requests": 6}, {"value": "svc-1", "requests": 5},
                             {"value": "svc-2", "requests": 4}, {"value": "svc-5", "requests": 1}]
    assert picked.more == 2  # svc-3, svc-4
    # selected among the busiest: still 3
    assert [v["value"] for v in lookups.service_choices(Scope(pid, "", *WINDOW), selected="svc-1", limit=3).values] == [
        "svc-0", "svc-1", "svc-2"]
    # a selected service without attempts in the window is offered too, with no count
    assert lookups.service_choices(Scope(pid, "", *WINDOW), selected="gone", limit=1).values[-1] == {"value": "gone",
                                                                                         "requests": None}


def test_a_picker_searches_by_substring_in_any_case(send):
    pid = send(f.request(f.attempt(), service="chat-gateway"), f.request(f.attempt(), service="Embedder"),
               f.request(*[f.attempt(route=f"/v1/item/{i}") for i in range(5)], f.attempt(route="/v1/chat")))
    found = lookups.service_choices(Scope(pid, "", *WINDOW), q="EMBED")
    assert (found.values, found.matching, found.more) == ([{"value": "Embedder", "requests": 1}], 1, 0)
    # the selected service stays offered when the search does not contain it, and is not counted as a match
    kept = lookups.service_choices(Scope(pid, "", *WINDOW), q="embed", selected="chat-gateway")
    assert [v["value"] for v in kept.values] == ["Embedder", "chat-gateway"] and kept.matching == 1
    assert lookups.service_choices(Scope(pid, "", *WINDOW), q="nothing-like-it").values == []
    routes = lookups.route_choices(Scope(pid, SVC, *WINDOW), q="ITEM", limit=2)
    assert [v["value"] for v in routes.values] == ["/v1/item/0", "/v1/item/1"]  # ties by name
    assert (routes.matching, routes.more) == (5, 3)


def test_latest_request_is_the_last_queued_at_and_none_without_attempts(send):
    pid = send(f.request(f.attempt(start_ns=f.BASE_NS), f.attempt(start_ns=f.BASE_NS + 90 * 1000 * f.MS)))
    assert lookups.latest_request(pid) == f.BASE + timedelta(seconds=90)  # queued at its start
    assert lookups.latest_request(pid + 1000) is None
