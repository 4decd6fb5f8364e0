"""analysis.lookups: the pickers' services and routes, and the latest attempt for the empty state."""
from datetime import timedelta

from analysis import lookups
from tests import factories as f
from tests.analysis.test_queries import DAY, SVC, buckets, send  # noqa: F401 (fixtures)


def test_services_busiest_first_and_routes_sorted(send):
    pid = send(f.request(f.attempt(route="/b"), f.attempt(route="/a"), f.attempt(route="/a")),
               f.request(f.attempt(), service="embedder"))
    assert lookups.services(pid, f.BASE - DAY, f.BASE + DAY) == [{"service": SVC, "requests": 3},
                                                               {"service": "embedder", "requests": 1}]
    assert lookups.routes(pid, SVC, f.BASE - DAY, f.BASE + DAY) == ["/a", "/b"]
    assert lookups.services(pid, f.BASE + DAY, f.BASE + 2 * DAY) == []


def test_latest_request_is_the_last_queued_at_and_none_without_attempts(send):
    pid = send(f.request(f.attempt(start_ns=f.BASE_NS), f.attempt(start_ns=f.BASE_NS + 90 * 1000 * f.MS)))
    assert lookups.latest_request(pid) == f.BASE + timedelta(seconds=90)  # queued at its start
    assert lookups.latest_request(pid + 1000) is None
