"""Counts over a window's aggregated core (request_hours, coverage_hours) plus its edges equal the counts over
every attempt, on random traffic; a window with an hour never aggregated reads every attempt."""
from datetime import timedelta

import pytest

from analysis import aggregates, lookups, queries
from store import client
from tests.analysis.test_scheduler_minutes import H0, RANDOM_ATTEMPTS

WINDOWS = [(H0, H0 + timedelta(hours=4)), (H0 + timedelta(minutes=17, seconds=3), H0 + timedelta(hours=3, minutes=41)),
           (H0 + timedelta(minutes=5), H0 + timedelta(minutes=55))]


@pytest.fixture
def pid(clickhouse, alpha):
    pid = alpha[0].id
    for seed, service in ((1, "svc"), (2, "other")):
        clickhouse.command(RANDOM_ATTEMPTS.replace("'svc'", f"'{service}'").replace("'ok'", "['ok', 'error'][1 + (number % 9 = 0)]")
                           .replace("'', '', '', hex(number)", "['/a', '/b', ''][1 + number % 3], '', '', hex(number)"),
                           parameters={"pid": pid, "seed": seed, "n": 900, "h0": H0})
    aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
    return pid


@pytest.mark.parametrize("start,end", WINDOWS)
def test_picker_counts_equal_every_attempt(pid, start, end):
    ours = lookups.service_choices(pid, start, end)
    theirs = client.query(lookups._sql("services"), parameters={
        "project_id": pid, **aggregates.whole(start, end).params, "q": "", "selected": "", "limit": 51})
    assert {v["value"]: v["requests"] for v in ours.values} == {r["value"]: r["requests"] for r in theirs}
    assert sum(v["requests"] for v in ours.values) > 100
    routes = lookups.route_choices(pid, "svc", start, end)
    theirs = client.query(lookups._sql("routes"), parameters={
        "project_id": pid, "service": "svc", **aggregates.whole(start, end).params, "q": "", "selected": "", "limit": 51})
    assert {v["value"]: v["requests"] for v in routes.values} == {r["value"]: r["requests"] for r in theirs}
    assert {v["value"] for v in routes.values} == {"/a", "/b"}
    assert queries.project_services(pid, start, end) == ["other", "svc"]


@pytest.mark.parametrize("start,end", WINDOWS)
@pytest.mark.parametrize("route", ["", "/a"])
def test_coverage_counts_equal_every_attempt(pid, start, end, route):
    ours = queries.coverage_counts(pid, "svc", start, end, route=route)
    theirs = client.query(queries._sql("coverage_counts"), parameters={
        **queries._params(pid, "svc", start, end, route), **aggregates.whole(start, end).params})
    assert ours == [{k: (v if k == "form" else int(v)) for k, v in r.items()} for r in theirs]
    assert ours[0]["attempts"] > 50 and ours[0]["successes"] < ours[0]["attempts"]


def test_an_hour_never_aggregated_leaves_the_window_without_a_core(pid):
    start, end = H0 - timedelta(hours=3), H0 + timedelta(hours=2)  # H0 - 3 h .. H0 - 1 h were never aggregated
    cut = aggregates.split(pid, start, end)
    assert cut.core_start == cut.core_end == end
    assert aggregates.split(pid, H0, end).core_start == H0


def test_an_hour_aggregated_again_carries_its_attempts_into_the_next_aggregated_hour(clickhouse, alpha):
    """An attempt queued late in hour 0 and in flight into hour 1 arrives after hour 1 was aggregated: aggregating
    hour 0 again redoes hour 1 (it has aggregates), whose backlog now starts with that attempt."""
    pid = alpha[0].id
    insert = RANDOM_ATTEMPTS.replace("sipHash64(number, {seed:UInt64}) % 14400000", "{offset:UInt64} + number")
    clickhouse.command(insert, parameters={"pid": pid, "seed": 1, "n": 1, "h0": H0, "offset": 4_000_000})
    aggregates.refresh(pid, H0 + timedelta(hours=1), H0 + timedelta(hours=2))  # hour 1, nothing in it yet
    assert aggregates.refresh(pid, H0, H0 + timedelta(hours=1)) == 2  # hour 0 and, aggregated, hour 1
    assert aggregates.refresh(pid, H0 + timedelta(hours=3), H0 + timedelta(hours=4)) == 1  # hour 4 never was
    late = insert.replace("hex(number), hex(sipHash64(number))", "'late', 'late'")
    clickhouse.command(late, parameters={"pid": pid, "seed": 2, "n": 1, "h0": H0, "offset": 3_590_000})
    hour1 = (H0 + timedelta(hours=1), H0 + timedelta(hours=2))
    before = queries.scheduler_sweep(pid, "svc", *hour1, 3_600_000)["instances"]
    aggregates.refresh(pid, H0, H0 + timedelta(hours=1))
    after = queries.scheduler_sweep(pid, "svc", *hour1, 3_600_000)["instances"]
    theirs = client.query(open(__file__.replace("test_aggregates.py", "scheduler_sweep_reference.sql")).read(),
                          parameters={"project_id": pid, "service": "svc", "start": hour1[0], "end": hour1[1],
                                      "bucket_ms": 3_600_000, "limit": queries.UINT32_MAX})
    assert sum(r["in_flight_ms"] for r in after) > sum(r["in_flight_ms"] for r in before)
    assert sum(r["in_flight_ms"] for r in after) == pytest.approx(sum(r["in_flight_ms_sum"] for r in theirs if r["is_instance_row"]))
