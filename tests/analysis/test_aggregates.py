"""Counts over a window's aggregated core (request_hours, coverage_hours) plus its edges equal the counts over
every attempt, on random traffic; the core is the window's longest run of aggregated hours; hours are aggregated
once they settle, by the minute job."""
from datetime import datetime, timedelta, timezone

import pytest

from analysis import scope as scope_
from analysis.models import JobWatermark, UnaggregatedHour
from analysis.reads import lookups, queries
from analysis.rollups import aggregates
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from analysis.sql_files import sql
from analysis.work import backlog, jobs
from projects.models import Project
from store import client
from store.tables import TABLES
from tests import factories as f
from tests import stored
from tests.analysis.test_scheduler_minutes import H0, RANDOM_ATTEMPTS
from tests.helpers import publish_buckets

WINDOWS = [(H0, H0 + timedelta(hours=4)), (H0 + timedelta(minutes=17, seconds=3), H0 + timedelta(hours=3, minutes=41)),
           (H0 + timedelta(minutes=5), H0 + timedelta(minutes=55)),
           # hours before H0 were never aggregated (no traffic): edges of two hours and more around the core
           (H0 - timedelta(hours=2, minutes=53), H0 + timedelta(hours=3, minutes=5))]


@pytest.fixture
def pid(clickhouse, alpha):
    """Two services of random attempts over H0's hours, published and aggregated (built once per worker)."""
    pid = alpha[0].id

    def build():
        for seed, service in ((1, "svc"), (2, "other")):
            clickhouse.command(RANDOM_ATTEMPTS.replace("'svc'", f"'{service}'").replace(
                "'ok'", "['ok', 'error'][1 + (number % 9 = 0)]").replace(
                "'', '', '', hex(number)", "['/a', '/b', ''][1 + number % 3], '', '', hex(number)"),
                parameters={"pid": pid, "seed": seed, "n": 900, "h0": H0})
        publish_buckets(pid)
        aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
    stored.once("aggregates_pid", (alpha[0],), build)
    return pid


@pytest.mark.parametrize("start,end", WINDOWS)
def test_picker_counts_equal_every_attempt(pid, start, end):
    ours = lookups.service_choices(Scope(pid, "", start, end))
    theirs = client.query(lookups._sql("services"), parameters={
        "project_id": pid, **aggregates.whole(start, end).params, "q": "", "selected": "", "limit": 51})
    assert {v["value"]: v["requests"] for v in ours.values} == {r["value"]: r["requests"] for r in theirs}
    assert sum(v["requests"] for v in ours.values) > 100
    # the pickers count what the diagnosis counts: each attempt of each hour's latest materialization once
    assert {v["value"]: v["requests"] for v in ours.values} == {
        service: queries.bucket_distribution(Scope(pid, service, start, end))["requests"] for service in ("svc", "other")}
    routes = lookups.route_choices(Scope(pid, "svc", start, end))
    theirs = client.query(lookups._sql("routes"), parameters={
        "project_id": pid, "service": "svc", **aggregates.whole(start, end).params, "q": "", "selected": "", "limit": 51})
    assert {v["value"]: v["requests"] for v in routes.values} == {r["value"]: r["requests"] for r in theirs}
    assert {v["value"] for v in routes.values} == {"/a", "/b"}
    assert queries.project_services(Scope(pid, "", start, end)) == ["other", "svc"]


def test_pickers_count_an_attempt_that_moved_hours_once(pid, clickhouse):
    """A later materialization moved attempts into the next hour (their queued_at came later, as a late SGLang
    prefill_waiting child's does): the hour they left still holds them in its earlier version, which no count sees."""
    clickhouse.command("SYSTEM STOP MERGES request_buckets")  # a merge would drop the earlier copies this is about
    try:
        clickhouse.command(
            "INSERT INTO request_buckets SELECT * REPLACE (queued_at + INTERVAL 50 MINUTE AS queued_at, now64(3) AS computed_at) "
            "FROM (SELECT * FROM request_buckets FINAL WHERE project_id = {p:UInt32} AND service = 'svc' "
            "AND toStartOfHour(queued_at) = {h0:DateTime('UTC')} AND toMinute(queued_at) >= 30)", parameters={"p": pid, "h0": H0})
        publish_buckets(pid)
        aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
        window = (H0, H0 + timedelta(hours=4))
        [(moved,)] = clickhouse.query_rows(
            "SELECT count() FROM request_buckets WHERE project_id = {p:UInt32} AND service = 'svc' "
            "AND toStartOfHour(queued_at) = {h0:DateTime('UTC')} AND toMinute(queued_at) >= 30", parameters={"p": pid, "h0": H0})
        assert moved > 10  # the earlier copies, still stored
    finally:
        clickhouse.command("SYSTEM START MERGES request_buckets")
    counts = {v["value"]: v["requests"] for v in lookups.service_choices(Scope(pid, "", *window)).values}
    assert counts["svc"] == queries.bucket_distribution(Scope(pid, "svc", *window))["requests"] == 900


@pytest.mark.parametrize("start,end", WINDOWS)
@pytest.mark.parametrize("route", ["", "/a"])
def test_coverage_counts_equal_every_attempt(pid, start, end, route):
    ours = queries.coverage_counts(Scope(pid, "svc", start, end, route=route))
    theirs = client.query(queries._sql("coverage_counts"), parameters={
        **Scope(pid, "svc", start, end, route).params(), **aggregates.whole(start, end).params})
    assert ours == [{k: (v if k == "form" else int(v)) for k, v in r.items()} for r in theirs]
    assert ours[0]["attempts"] > 50 and ours[0]["successes"] < ours[0]["attempts"]


@pytest.fixture
def retried(pid, clickhouse):
    """pid's traffic with retries: runs of 1-3 attempts (t_retry known for two thirds), causes and tokens."""

    def build():
        clickhouse.command(
            "ALTER TABLE request_buckets UPDATE run_attempt_count = 1 + cityHash64(span_id, 1) % 3, "
            "is_final_attempt = cityHash64(span_id, 2) % 4 != 0, "
            "t_retry_ms = if(cityHash64(span_id, 3) % 3 = 0, NULL, toFloat64(cityHash64(span_id, 4) % 900)), "
            "retry_cause = ['timeout', 'http_429', ''][1 + cityHash64(span_id, 5) % 3], "
            "input_tokens = toUInt32(cityHash64(span_id, 6) % 4000), "
            "output_tokens = if(cityHash64(span_id, 7) % 5 = 0, NULL, toUInt32(cityHash64(span_id, 8) % 300)) "
            "WHERE project_id = {p:UInt32} SETTINGS mutations_sync = 1", parameters={"p": pid})
        aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
    stored.once("aggregates_retried", (Project.objects.get(pk=pid),), build)
    return pid


@pytest.mark.parametrize("start,end", WINDOWS)
@pytest.mark.parametrize("route,tenant", [("", ""), ("/a", ""), ("", "t3")])
def test_retry_counts_equal_every_attempt(retried, start, end, route, tenant):
    ours = queries.retry_summary(Scope(retried, "svc", start, end, route=route, tenant=tenant))
    [theirs] = client.query(queries._sql("retry_summary"), parameters={
        **Scope(retried, "svc", start, end, route, tenant).params(), **aggregates.whole(start, end).params})
    keys, counts = theirs.pop("causes")
    assert ours == {**{k: int(v) for k, v in theirs.items()}, "causes": dict(zip(keys, map(int, counts)))}
    assert ours["runs"] > ours["known_runs"] > ours["runs_with_retries"] > 0 and ours["extra_attempts"] > 0
    assert ours["causes"] and set(ours["causes"]) <= {"timeout", "http_429", ""} and ours["wasted_input_tokens"] > 0


def test_the_upgrade_fills_the_retries_of_hours_aggregated_before_them(retried):
    """Store migration 0030 writes retry_hours for hours aggregated before retry_hours existed, at their version."""
    from pathlib import Path
    window = (H0 + timedelta(minutes=10), H0 + timedelta(hours=3, minutes=50))
    refreshed = queries.retry_summary(Scope(retried, "svc", *window))
    client.command("TRUNCATE TABLE retry_hours")
    assert queries.retry_summary(Scope(retried, "svc", *window))["attempts"] < refreshed["attempts"] * 0.6  # the core's are gone
    client.command((Path(__file__).parents[2] / "store/migrations/0030_fill_retry_hours.sql").read_text())
    assert queries.retry_summary(Scope(retried, "svc", *window)) == refreshed


@pytest.fixture
def churned(pid, clickhouse):
    """pid's traffic with connection churn, retries, failures and TTFTs (some unknown): churn_windows's inputs."""

    def build():
        clickhouse.command(
            "ALTER TABLE request_buckets UPDATE attempt = 1 + cityHash64(span_id, 1) % 3, "
            "is_final_attempt = cityHash64(span_id, 2) % 4 != 0, "
            "connection_reused = [NULL, true, false][1 + cityHash64(span_id, 3) % 3], "
            "t_first_token_ms = if(cityHash64(span_id, 4) % 7 = 0, NULL, toFloat64(cityHash64(span_id, 5) % 2000) / 4), "
            "ttft_ms = if(cityHash64(span_id, 6) % 5 = 0, NULL, toFloat64(cityHash64(span_id, 7) % 5000) / 3) "
            "WHERE project_id = {p:UInt32} SETTINGS mutations_sync = 1", parameters={"p": pid})
        aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
    stored.once("aggregates_churned", (Project.objects.get(pk=pid),), build)
    return pid


def _same(a, b) -> bool:
    """Equal, floats to 1e-9 (the sums behind a stddev may add up in another order)."""
    return a == b if a is None or b is None or not isinstance(a, float) else a == pytest.approx(b, rel=1e-9)


def _every_attempt_churn(pid, start, end, route, tenant):
    return client.query(queries._sql("churn_windows"), parameters={
        **Scope(pid, "svc", start, end, route, tenant).params(), **aggregates.whole(start, end).params})


@pytest.mark.parametrize("start,end", WINDOWS)
@pytest.mark.parametrize("route,tenant", [("", ""), ("/a", ""), ("", "t3")])
def test_churn_minutes_equal_every_attempt(churned, start, end, route, tenant):
    ours = queries.churn_windows(Scope(churned, "svc", start, end, route=route, tenant=tenant))
    theirs = _every_attempt_churn(churned, start, end, route, tenant)
    assert [r["minute"] for r in ours] == [r["minute"].replace(tzinfo=timezone.utc) for r in theirs]
    for mine, exact in zip(ours, theirs):
        for key, value in mine.items():
            if key != "minute":  # NaN (fewer than 2 values) is None in both
                assert _same(value, queries.finite(exact[key])), (key, value, exact[key])
    assert sum(r["attempts"] for r in ours) > 20 and sum(r["new_connections"] for r in ours) > 3
    assert sum(r["retries"] for r in ours) > 3 and any(r["ttft_p95"] for r in ours)
    assert sum(r["connection_known"] for r in ours) < sum(r["attempts"] for r in ours)


def test_churn_reads_the_stored_minutes_of_the_core(churned, clickhouse):
    """The core's minutes come from churn_minutes: a row changed there shows, a window without a core does not see it."""
    minute = H0 + timedelta(hours=2, minutes=7)
    clickhouse.command("ALTER TABLE churn_minutes UPDATE attempts = 123456 WHERE minute = {m:DateTime('UTC')} AND NOT by_route "
                       "SETTINGS mutations_sync = 1", parameters={"m": minute})
    rows = queries.churn_windows(Scope(churned, "svc", H0, H0 + timedelta(hours=4)))
    assert {r["minute"]: r["attempts"] for r in rows}[minute.replace(tzinfo=timezone.utc)] == 123456
    routed = queries.churn_windows(Scope(churned, "svc", H0, H0 + timedelta(hours=4), route="/a"))
    assert 0 < {r["minute"]: r["attempts"] for r in routed}[minute.replace(tzinfo=timezone.utc)] < 123456


def test_the_upgrade_fills_the_churn_of_hours_aggregated_before_it(churned):
    """Store migration 0040 writes churn_minutes for hours aggregated before churn_minutes existed, at their version."""
    from pathlib import Path
    window = (H0 + timedelta(minutes=10), H0 + timedelta(hours=3, minutes=50))
    refreshed = queries.churn_windows(Scope(churned, "svc", *window, route="/b"))
    client.command("TRUNCATE TABLE churn_minutes")
    assert len(queries.churn_windows(Scope(churned, "svc", *window, route="/b"))) < len(refreshed) * 0.6  # the core's are gone
    client.command((Path(__file__).parents[2] / "store/migrations/0040_fill_churn_minutes.sql").read_text())
    again = queries.churn_windows(Scope(churned, "svc", *window, route="/b"))
    assert [r["minute"] for r in again] == [r["minute"] for r in refreshed]
    for mine, before in zip(again, refreshed):
        assert all(_same(mine[key], before[key]) for key in mine), (mine, before)


@pytest.fixture
def sliced(churned, clickhouse):
    """churned's traffic (routes /a, /b and none, tenants t0-t6, instances i0-i2) with totals and some errors."""

    def build():
        clickhouse.command(
            "ALTER TABLE request_buckets UPDATE total_ms = if(cityHash64(span_id, 8) % 6 = 0, NULL, "
            "toFloat64(cityHash64(span_id, 9) % 9000) / 7) WHERE project_id = {p:UInt32} SETTINGS mutations_sync = 1",
            parameters={"p": churned})
        aggregates.refresh(churned, H0, H0 + timedelta(hours=4))
    stored.once("aggregates_sliced", (Project.objects.get(pk=churned),), build)
    return churned


def _every_attempt_slices(pid, start, end, **limits):
    columns = client.query_columns(queries._sql("incident_series_slices"), parameters={
        **Scope(pid, "svc", start, end).params(services=["svc"], **limits), **aggregates.whole(start, end).params})
    out = {}
    for dimension, value, point in zip(columns["dimension"], columns["value"], queries._series_points(columns)):
        out.setdefault((dimension, value), []).append(point)
    return out


@pytest.mark.parametrize("start,end", WINDOWS)
@pytest.mark.parametrize("limits", [dict(min_attempts=1, min_minutes=1, max_slices=queries.UINT32_MAX),
                                    dict(min_attempts=2, min_minutes=20, max_slices=2)])
def test_incident_minutes_equal_every_attempt(sliced, start, end, limits):
    """Incident detection's series of a service and its slices: the core's minutes from incident_minutes plus the
    edges equal the read of every attempt, and so does the choice of slices."""
    ours = queries.incident_series_slices(Scope(sliced, "svc", start, end), **limits)
    theirs = _every_attempt_slices(sliced, start, end, **limits)
    assert ours == theirs
    # read with other services (the incidents step's batches): each one's series as read alone
    together = queries.incident_series_slices_of(Scope(sliced, "", start, end), ["other", "svc", "nothing"], **limits)
    assert together["svc"] == ours and together["nothing"] == {("", ""): []}
    assert together["other"] == queries.incident_series_slices(Scope(sliced, "other", start, end), **limits) != ours
    assert sum(p["attempts"] for p in ours[("", "")]) > 20
    assert any(p["ttft"]["count"] and p["total"]["p95"] is not None for p in ours[("", "")])
    per_dimension = {d: sum(1 for dimension, _ in ours if dimension == d) for d in ("route", "tenant", "instance")}
    if limits["max_slices"] == 2:
        assert max(per_dimension.values()) <= 2  # of 7 tenants, 3 instances
    else:
        assert per_dimension == {"route": 2, "tenant": 7, "instance": 3}


def test_incident_series_read_the_stored_minutes_of_the_core(sliced, clickhouse):
    """The core's minutes come from incident_minutes: a row changed there shows; a window without a core does not see
    it."""
    [(minute,)] = clickhouse.query_rows(
        "SELECT min(minute) FROM incident_minutes WHERE dimension = 'tenant' AND value = 't3' "
        "AND minute >= {m:DateTime('UTC')}", parameters={"m": H0 + timedelta(hours=2)})
    clickhouse.command("ALTER TABLE incident_minutes UPDATE errors = 4321 WHERE minute = {m:DateTime('UTC')} "
                       "AND dimension = 'tenant' AND value = 't3' SETTINGS mutations_sync = 1", parameters={"m": minute})
    minute = minute.replace(tzinfo=None)
    limits = dict(min_attempts=1, min_minutes=1, max_slices=queries.UINT32_MAX)
    at = minute.replace(tzinfo=timezone.utc)
    rows = queries.incident_series_slices(Scope(sliced, "svc", H0, H0 + timedelta(hours=4)), **limits)
    assert {p["at"]: p["errors"] for p in rows[("tenant", "t3")]}[at] == 4321
    inside = queries.incident_series_slices(Scope(sliced, "svc", minute - timedelta(minutes=5), minute + timedelta(minutes=5)), **limits)  # no whole hour: every attempt
    assert {p["at"]: p["errors"] for p in inside[("tenant", "t3")]}[at] < 4321


def test_the_upgrade_fills_the_incident_minutes_of_hours_aggregated_before_it(sliced):
    """Store migration 0044 writes incident_minutes for hours aggregated before the table existed, at their version."""
    from pathlib import Path
    window = (H0 + timedelta(minutes=10), H0 + timedelta(hours=3, minutes=50))
    limits = dict(min_attempts=1, min_minutes=1, max_slices=3)
    refreshed = queries.incident_series_slices(Scope(sliced, "svc", *window), **limits)
    client.command("TRUNCATE TABLE incident_minutes")
    gone = queries.incident_series_slices(Scope(sliced, "svc", *window), **limits)[("", "")]
    assert len(gone) < len(refreshed[("", "")]) - 100  # the core's two hours are gone
    client.command((Path(__file__).parents[2] / "store/migrations/0044_fill_incident_minutes.sql").read_text())
    assert queries.incident_series_slices(Scope(sliced, "svc", *window), **limits) == refreshed


def test_the_core_is_the_longest_run_of_aggregated_hours(clickhouse, alpha):
    pid = alpha[0].id
    clickhouse.command(RANDOM_ATTEMPTS, parameters={"pid": pid, "seed": 3, "n": 900, "h0": H0})
    publish_buckets(pid)
    aggregates.refresh(pid, H0 + timedelta(hours=3), H0 + timedelta(hours=4))  # hour 3
    aggregates.refresh(pid, H0, H0 + timedelta(hours=1))  # hour 0: hour 1 never was, nor hour 2
    start, end = H0 - timedelta(minutes=30), H0 + timedelta(hours=4, minutes=30)
    assert aggregates.split(pid, start, end).params == {"start": start, "end": end, "core_start": H0,
                                                         "core_end": H0 + timedelta(hours=1)}  # the earliest of two
    aggregates.refresh(pid, H0 + timedelta(hours=2), H0 + timedelta(hours=3))  # hour 2 and, aggregated, hour 3
    cut = aggregates.split(pid, start, end)
    assert (cut.core_start, cut.core_end) == (H0 + timedelta(hours=2), H0 + timedelta(hours=4))
    ours = queries.coverage_counts(Scope(pid, "svc", start, end))
    theirs = client.query(queries._sql("coverage_counts"), parameters={
        **Scope(pid, "svc", start, end, "").params(), **aggregates.whole(start, end).params})
    assert ours == [{k: (v if k == "form" else int(v)) for k, v in r.items()} for r in theirs]
    assert ours[0]["attempts"] == 900
    assert aggregates.split(pid, H0 + timedelta(hours=1), H0 + timedelta(hours=2)) == aggregates.whole(
        H0 + timedelta(hours=1), H0 + timedelta(hours=2))


def _aggregated(pid) -> list[datetime]:
    rows = client.query_rows(aggregates._sql("aggregated_hours"),
                             parameters={"project_id": pid, "start": f.BASE - timedelta(days=1), "end": f.BASE + timedelta(days=1)})
    return [h.replace(tzinfo=timezone.utc) for (h,) in rows]


def test_hours_are_aggregated_once_they_settle_by_the_minute_job(alpha, ingest):
    """The hour taking spans gets no aggregates; the first minute job after it settled aggregates it once, and
    a settled hour materialized again (late spans) is aggregated at once."""
    project, key = alpha
    hour = timedelta(hours=1)
    spans = [f.attempt(start_ns=int((f.BASE.timestamp() + 600 * i) * 1e9)) for i in range(12)]  # 10:00-11:50
    ingest(key, f.request(*spans))
    ingest(key, f.request(*[f.attempt(start_ns=int((f.BASE.timestamp() + 7200 + i) * 1e9)) for i in range(3)]))  # 12:00
    # at 12:05 the three hours are materialized; 10:00 has settled (at 11:10) and is aggregated with them, 11:00
    # (settles at 12:10) and 12:00 wait
    first = jobs.materialize_since_watermark(f.BASE + 2 * hour + timedelta(minutes=5))
    assert (first["hours"], first["aggregated"]) == (3, 0)
    assert _aggregated(project.id) == [f.BASE]
    assert set(UnaggregatedHour.objects.values_list("hour", flat=True)) == {f.BASE + hour, f.BASE + 2 * hour}
    # 12:10, nothing ingested since (the watermark moved past the overlap): 11:00 has settled, 12:00 has not
    JobWatermark.objects.filter(name=backlog.MATERIALIZE).update(at=backlog.store_now() + timedelta(minutes=5))
    second = jobs.materialize_since_watermark(f.BASE + 2 * hour + timedelta(minutes=10))
    assert (second["hours"], second["aggregated"]) == (0, 1)
    assert _aggregated(project.id) == [f.BASE, f.BASE + hour]
    assert list(UnaggregatedHour.objects.values_list("hour", flat=True)) == [f.BASE + 2 * hour]
    assert jobs.materialize_since_watermark(f.BASE + 2 * hour + timedelta(minutes=11))["aggregated"] == 0
    # a late span of 10:00 at 12:30: materialized and aggregated at once (with 11:00, which has aggregates)
    JobWatermark.objects.filter(name=backlog.MATERIALIZE).update(at=backlog.store_now() - timedelta(minutes=5))
    ingest(key, f.request(f.attempt(start_ns=int((f.BASE.timestamp() + 30) * 1e9))))
    late = jobs.materialize_since_watermark(f.BASE + 2 * hour + timedelta(minutes=30))
    assert late["aggregated"] == 0 and _aggregated(project.id) == [f.BASE, f.BASE + hour]
    cut = aggregates.split(project.id, f.BASE - timedelta(minutes=30), f.BASE + 2 * hour + timedelta(minutes=30))
    assert (cut.core_start, cut.core_end) == (f.BASE.replace(tzinfo=None), (f.BASE + 2 * hour).replace(tzinfo=None))
    assert queries.coverage_counts(Scope(project.id, "llm-gateway", f.BASE - hour, f.BASE + 3 * hour))[0]["attempts"] == 16


def test_an_hour_aggregated_again_carries_its_attempts_into_the_next_aggregated_hour(clickhouse, alpha):
    """An attempt queued late in hour 0 and in flight into hour 1 arrives after hour 1 was aggregated: aggregating
    hour 0 again redoes hour 1 (it has aggregates), whose backlog now starts with that attempt."""
    pid = alpha[0].id
    insert = RANDOM_ATTEMPTS.replace("sipHash64(number, {seed:UInt64}) % 14400000", "{offset:UInt64} + number")
    clickhouse.command(insert, parameters={"pid": pid, "seed": 1, "n": 1, "h0": H0, "offset": 4_000_000})
    publish_buckets(pid)
    aggregates.refresh(pid, H0 + timedelta(hours=1), H0 + timedelta(hours=2))  # hour 1, nothing in it yet
    assert aggregates.refresh(pid, H0, H0 + timedelta(hours=1)) == 2  # hour 0 and, aggregated, hour 1
    assert aggregates.refresh(pid, H0 + timedelta(hours=3), H0 + timedelta(hours=4)) == 1  # hour 4 never was
    late = insert.replace("hex(number), hex(sipHash64(number))", "'late', 'late'")
    clickhouse.command(late, parameters={"pid": pid, "seed": 2, "n": 1, "h0": H0, "offset": 3_590_000})
    publish_buckets(pid)
    hour1 = (H0 + timedelta(hours=1), H0 + timedelta(hours=2))
    before = queries.scheduler_sweep(Scope(pid, "svc", *hour1), 3_600_000)["instances"]
    aggregates.refresh(pid, H0, H0 + timedelta(hours=1))
    after = queries.scheduler_sweep(Scope(pid, "svc", *hour1), 3_600_000)["instances"]
    theirs = client.query(open(__file__.replace("test_aggregates.py", "scheduler_sweep_reference.sql")).read(),
                          parameters={"project_id": pid, "service": "svc", "start": hour1[0], "end": hour1[1],
                                      "bucket_ms": 3_600_000, "limit": queries.UINT32_MAX})
    assert sum(r["in_flight_ms"] for r in after) > sum(r["in_flight_ms"] for r in before)
    assert sum(r["in_flight_ms"] for r in after) == pytest.approx(sum(r["in_flight_ms_sum"] for r in theirs if r["is_instance_row"]))


def test_the_upgrade_fills_the_shares_of_hours_aggregated_before_them(clickhouse, alpha, monkeypatch):
    """Store migration 0022 writes share_hours for hours aggregated before share_hours existed, at their version."""
    from pathlib import Path
    pid = alpha[0].id
    clickhouse.command(RANDOM_ATTEMPTS, parameters={"pid": pid, "seed": 4, "n": 900, "h0": H0})
    total = "(100 + cityHash64(span_id) % 5000)"  # an UPDATE's expressions read the values before it
    clickhouse.command(f"ALTER TABLE request_buckets UPDATE total_ms = {total}, "
                       f"t_queue_ms = {total} * (cityHash64(span_id, 1) % 100) / 200, "
                       f"t_first_token_ms = {total} * (cityHash64(span_id, 2) % 100 + 1) / 300 "
                       "WHERE project_id = {p:UInt32} SETTINGS mutations_sync = 1", parameters={"p": pid})
    publish_buckets(pid)
    aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
    monkeypatch.setattr(scope_, "SKETCH_MIN_ATTEMPTS", 100)
    monkeypatch.setattr(scope_, "SKETCH_AFTER", timedelta(hours=2))
    start, end = H0 + timedelta(minutes=10), H0 + timedelta(hours=3, minutes=50)
    assert Scope(pid, "svc", start, end).sketched("request_shares")[0] == "request_shares_sketch"
    refreshed = queries.request_shares(Scope(pid, "svc", start, end))
    assert refreshed["shared"] == refreshed["first_token_n"] > 600 and 0 < refreshed["t_queue_share"] < 0.5
    client.command("TRUNCATE TABLE share_hours")
    assert queries.request_shares(Scope(pid, "svc", start, end))["shared"] < refreshed["shared"] / 2  # the core's are gone
    client.command((Path(__file__).parents[2] / "store/migrations/0022_fill_share_hours.sql").read_text())
    assert queries.request_shares(Scope(pid, "svc", start, end)) == refreshed


def test_the_upgrade_fills_the_segments_of_hours_aggregated_before_them(clickhouse, alpha, monkeypatch, settings):
    """Store migration 0026 writes segment_hours (at the default edges) for hours aggregated before segment_hours
    existed, at their version; the sketched segments then read them as they read a refresh's."""
    from pathlib import Path
    pid = alpha[0].id
    clickhouse.command(RANDOM_ATTEMPTS, parameters={"pid": pid, "seed": 5, "n": 900, "h0": H0})
    clickhouse.command("ALTER TABLE request_buckets UPDATE input_tokens = 100 + cityHash64(span_id) % 20000, "
                       "total_ms = 100 + cityHash64(span_id, 1) % 5000 "
                       "WHERE project_id = {p:UInt32} SETTINGS mutations_sync = 1", parameters={"p": pid})
    publish_buckets(pid)
    settings.ANALYSIS_SEGMENT_EDGES = (1000, 4000, 16000)  # the edges the migration fills
    aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
    monkeypatch.setattr(scope_, "SKETCH_MIN_ATTEMPTS", 100)
    monkeypatch.setattr(scope_, "SKETCH_AFTER", timedelta(hours=2))
    start, end = H0 + timedelta(minutes=10), H0 + timedelta(hours=3, minutes=50)
    edges = [1000, 4000, 16000]
    refreshed = queries.bucket_distribution_by_segment(Scope(pid, "svc", start, end), edges)
    assert [r["segment"] for r in refreshed] == ["<1k", "1-4k", "4-16k", ">16k"]
    assert sum(r["requests"] for r in refreshed) > 600
    client.command("TRUNCATE TABLE segment_hours")
    assert Scope(pid, "svc", start, end).sketched("bucket_distribution_by_segment", cover="segmented", edges=edges)[
        0] == "bucket_distribution_by_segment"  # not covered: read exactly
    client.command((Path(__file__).parents[2] / "store/migrations/0026_fill_segment_hours.sql").read_text())
    assert Scope(pid, "svc", start, end).sketched("bucket_distribution_by_segment", cover="segmented", edges=edges)[
        0] == "bucket_distribution_by_segment_sketch"
    assert queries.bucket_distribution_by_segment(Scope(pid, "svc", start, end), edges) == refreshed


def test_the_upgrade_fills_the_tenants_over_routes_of_hours_aggregated_before_them(clickhouse, alpha, monkeypatch):
    """Store migration 0028 writes tenant_service_hours from the current tenant_hours rows of hours aggregated
    before it existed; the sketched tenant tails then read them as they read a refresh's."""
    from pathlib import Path
    pid = alpha[0].id
    clickhouse.command(RANDOM_ATTEMPTS, parameters={"pid": pid, "seed": 6, "n": 900, "h0": H0})
    clickhouse.command("ALTER TABLE request_buckets UPDATE total_ms = 100 + cityHash64(span_id, 1) % 5000, "
                       "t_queue_ms = cityHash64(span_id, 2) % 700 "
                       "WHERE project_id = {p:UInt32} SETTINGS mutations_sync = 1", parameters={"p": pid})
    publish_buckets(pid)
    aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
    aggregates.refresh(pid, H0 + timedelta(hours=1), H0 + timedelta(hours=2))  # a second version of one hour
    monkeypatch.setattr(scope_, "SKETCH_MIN_ATTEMPTS", 100)
    monkeypatch.setattr(scope_, "SKETCH_AFTER", timedelta(hours=2))
    start, end = H0 + timedelta(minutes=10), H0 + timedelta(hours=3, minutes=50)
    assert Scope(pid, "svc", start, end).sketched("tenant_tails_top")[0] == "tenant_tails_top_sketch"
    refreshed = queries.tenant_tails_top(Scope(pid, "svc", start, end), 5)
    total = sum(r["requests"] for r in refreshed)
    assert total > 600
    client.command("TRUNCATE TABLE tenant_service_hours")
    # the core's (2 h 00 of the window's 3 h 40) are gone
    assert sum(r["requests"] for r in queries.tenant_tails_top(Scope(pid, "svc", start, end), 5)) < total * 0.6
    client.command((Path(__file__).parents[2] / "store/migrations/0028_fill_tenant_service_hours.sql").read_text())
    assert queries.tenant_tails_top(Scope(pid, "svc", start, end), 5) == refreshed


def test_reader_threads_asking_at_once_wait_for_one_read(settings):
    """remembered() in reader threads started together: one read, every thread gets its answer (or its error)."""
    import threading
    import time

    from store.concurrent import gather
    settings.CLICKHOUSE_READ_THREADS = 3
    reads = []

    def slow(answer):
        def read():
            reads.append(threading.get_ident())
            time.sleep(0.2)  # the others ask while this read is under way
            if isinstance(answer, Exception):
                raise answer
            return answer
        return read
    with aggregates.shared_reads():
        assert gather(*[lambda: aggregates.remembered(("k",), slow(42))] * 3) == [42, 42, 42]
        assert len(reads) == 1
        with pytest.raises(ValueError, match="store down"):
            gather(*[lambda: aggregates.remembered(("bad",), slow(ValueError("store down")))] * 3)
        assert len(reads) == 2
    assert aggregates.remembered(("k",), lambda: 7) == 7  # outside a block: read each time


def test_one_diagnosis_asks_its_window_core_once(pid, monkeypatch, settings):
    """Within shared_reads() (run_diagnosis), split() reads aggregated_hours once per window, in the reader threads of
    store/concurrent.py too; outside it, every call reads."""
    from store.concurrent import gather
    settings.CLICKHOUSE_READ_THREADS = 2
    asked, real = [], client.query_rows
    monkeypatch.setattr(client, "query_rows", lambda sql, **kw: (asked.append(sql), real(sql, **kw))[1])
    window = (H0 + timedelta(minutes=10), H0 + timedelta(hours=3, minutes=50))
    core = aggregates.split(pid, *window)
    assert aggregates.split(pid, *window) == core and len(asked) == 2
    asked.clear()
    with aggregates.shared_reads():
        assert aggregates.split(pid, *window) == core
        assert gather(lambda: aggregates.split(pid, *window), lambda: aggregates.split(pid, *window)) == [core, core]
        with aggregates.shared_reads():  # a diagnosis inside a page's block shares the page's answers
            assert aggregates.split(pid, *window) == core
    assert len(asked) == 1 and "aggregated_hours" in asked[0]


def test_chunks_of_the_refresh_change_nothing_but_its_statements(pid, monkeypatch):
    """The tests aggregate a window in one chunk (tests/conftest.py aggregate_in_one_chunk); the product's chunks of
    CHUNK_HOURS, or of one hour, give the same reads of every aggregate."""
    start, end = H0 + timedelta(minutes=17, seconds=3), H0 + timedelta(hours=3, minutes=41)

    def reads():  # new Scopes each time: a Scope keeps the split it saw first
        window, day = Scope(pid, "svc", start, end), Scope(pid, "svc", H0, H0 + timedelta(hours=4))
        return [lookups.service_choices(window).values, queries.bucket_distribution(window),
                queries.retry_summary(window), queries.churn_windows(window), queries.request_shares(window),
                queries.tenant_tails(window), queries.scheduler_sweep(window, bucket_ms=60_000),
                queries.overview_series(day, 900_000)]

    whole = reads()
    for chunk in (1, 6):
        monkeypatch.setattr(aggregates, "CHUNK_HOURS", chunk)
        aggregates.refresh(pid, H0, H0 + timedelta(hours=4))  # a newer version of every hour's rows
        assert reads() == whole, chunk


def test_the_aggregates_skipped_for_want_of_a_row_would_write_nothing(clickhouse, alpha, ingest):
    # refresh() asks request_buckets_any before the aggregate statements (30-500 ms each to plan, whatever they read):
    # each window here has one attempt started at a distance around their read bounds; wherever the question finds
    # none, every statement run anyway writes no row
    project, key = alpha
    offsets = [timedelta(hours=-1, milliseconds=-1), timedelta(hours=-1), timedelta(minutes=20),
               timedelta(hours=2, milliseconds=-1), timedelta(hours=2)]
    windows = [f.BASE + timedelta(hours=10 * (i + 1)) for i in range(len(offsets))]
    spans = [f.attempt(start_ns=int((w + o).timestamp() * 1000) * f.MS) for w, o in zip(windows, offsets)]
    ingest(key, f.request(*spans))
    assert materialize(project.id, windows[0] - timedelta(hours=2), windows[-1] + timedelta(hours=3)) == len(spans)
    found, written = [], []
    for i, window in enumerate(windows):
        computed_at = datetime(2030, 1, 1, 0, 0, i)
        params = {"project_id": project.id, "start": window.replace(tzinfo=None), "end": (window + timedelta(hours=1)).replace(tzinfo=None),
                  "computed_at": computed_at, "edges": [500, 2000]}
        found.append(bool(client.query_rows(sql("request_buckets_any"), parameters=params)))
        for chain in aggregates.CHAINS:
            for statement in chain:
                client.command(sql(statement), parameters=params)
        written.append({t.name: client.query_rows(f"SELECT count() FROM {t.name} WHERE computed_at = {{c:DateTime64(3, 'UTC')}}",
                                                  parameters={"c": computed_at})[0][0] for t in TABLES if t.fill})
    assert found == [False, True, True, True, False], found
    assert sum(written[2].values()) > 0, written[2]  # the attempt inside the window: rows in the aggregates
    assert all(any_ or not any(n.values()) for any_, n in zip(found, written)), list(zip(found, written))
