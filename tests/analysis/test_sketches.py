"""Long windows read their whole hours' distributions from per-minute DDSketches (bucket_minutes). The sketch
promises 0.2 % of a value near the rank; where values are sparse (a tail, a minute) the rank's neighbours can be
further apart than that, so the promise tested is: on the simulator's presets p50 and p95 within 1 % of the exact
ones wherever the window holds at least MIN_COUNT values (p99 within 2.5 %), a minute's p95 (a few hundred values) between
its exact p90 and p99, and counts and means unchanged."""
from datetime import timedelta

import pytest

from analysis import buckets
from analysis import scope as scope_
from analysis.evidence_types import OTHERS
from analysis.reads import queries
from analysis.rollups import aggregates
from analysis.scope import Scope
from analysis.windows import utc_naive
from tests.simulated import send_simulated
from tests.stored import once

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fewer_gc_passes")]


@pytest.fixture(autouse=True)
def sketch_small_services(monkeypatch):
    """The presets send thousands of attempts, not the SKETCH_MIN_ATTEMPTS a real service needs to be sketched."""
    monkeypatch.setattr(scope_, "SKETCH_MIN_ATTEMPTS", 1000)
TOLERANCE = 0.01
MIN_COUNT = 2000


def long_window(project, sent):
    """A window past SKETCH_AFTER around the traffic, with an aggregated core and cut edges."""
    # the traffic's hours whole inside the core, whatever the minute the test runs at
    end = utc_naive(sent.end).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1, minutes=7)
    start = end - scope_.SKETCH_AFTER - timedelta(minutes=13)
    aggregates.refresh(project.id, start, end)
    cut = aggregates.split(project.id, start, end)
    assert cut.core_start < cut.core_end and cut.start < cut.core_start
    return start, end


def exact(name, project, sent, start, end, **more):
    from store import client
    return client.query(queries._sql(name), parameters=Scope(project.id, sent.service, start, end).params(**more))


# One seed for the sends of the same preset and duration: the traffic is generated once a machine and replayed after
# (tests/simulated.py), so tests that read different properties of it share one generation.
SEED = 11


def shared(project, key, preset: str, duration: str):
    """send_simulated(preset, duration, SEED) for the tests that only read it: ingested and materialized by the first
    of them in this worker, its rows copied back for the next (tests/stored.py). Each test then aggregates its window
    itself (long_window)."""
    return once(f"sketches_{preset}_{duration}", [project],
                lambda: send_simulated(project, key, base=preset, duration=duration, seed=SEED))


# decode_throughput sends fewer, longer requests: it needs longer to reach MIN_COUNT
@pytest.mark.parametrize("preset,duration", [("queue_backlog", "20m"), ("decode_throughput", "45m"),
                                             ("retry_amplification", "20m"), ("noisy_tenant", "20m")])
def test_sketched_distributions_stay_within_one_percent(preset, duration, clickhouse, alpha):
    project, key = alpha
    sent = shared(project, key, preset, duration)
    start, end = long_window(project, sent)
    assert Scope(project.id, sent.service, start, end).sketched("bucket_distribution")[0].endswith("_sketch")
    ours = queries.bucket_distribution(Scope(project.id, sent.service, start, end))
    [theirs] = exact("bucket_distribution", project, sent, start, end)
    assert ours["requests"] == theirs["requests"] > 1000
    compared = 0
    for name in buckets.ALL:
        got, count = ours["buckets"][name], int(theirs[f"{name}_count"])
        assert got["count"] == count
        if not count:
            assert got["p95"] is None
            continue
        assert got["mean"] == pytest.approx(theirs[f"{name}_mean"], rel=1e-9)
        for level, want, rel in zip(("p50", "p95", "p99"), theirs[f"{name}_q"], (TOLERANCE, TOLERANCE, 0.025)):
            if count >= MIN_COUNT:
                assert got[level] == pytest.approx(want, rel=rel, abs=0.5), (name, level)
                compared += 1
    assert compared >= 9


def test_sketched_series_keep_counts_and_stay_within_one_percent(clickhouse, alpha):
    project, key = alpha
    sent = shared(project, key, "queue_backlog", "20m")
    start, end = long_window(project, sent)
    ours = queries.incident_series(Scope(project.id, sent.service, start, end))
    theirs = exact("incident_series", project, sent, start, end, instance="")
    assert len(ours) == len(theirs) > 15
    assert [(p["at"], p["attempts"], p["errors"]) for p in ours] == [
        (r["minute"].replace(tzinfo=p["at"].tzinfo), r["attempts"], r["errors"]) for p, r in zip(ours, theirs)]
    from store import client
    brackets = client.query_rows(
        "SELECT toStartOfMinute(queued_at) AS m, quantilesExactInclusive(0.9, 0.99)(ttft_ms) FROM request_buckets FINAL "
        "WHERE project_id = {p:UInt32} GROUP BY m ORDER BY m", parameters={"p": project.id})
    bracket = {m: q for m, q in brackets}
    # a minute the traffic only began or ended in holds a handful of values, whose neighbouring ranks lie further
    # apart than p90 and p99 do: the promise is for minutes of a few hundred values
    full = [point for point in ours if point["ttft"]["count"] >= 100]
    assert len(full) >= len(ours) - 2
    for point in full:
        low, high = bracket[utc_naive(point["at"])]
        assert low * 0.998 <= point["ttft"]["p95"] <= high * 1.002, point["at"]
    series = queries.overview_series(Scope(project.id, sent.service, start, end), 600_000)
    assert sum(p["requests"] for p in series) == sum(r["attempts"] for r in theirs)
    assert sum(p["errors"] for p in series) == sum(r["errors"] for r in theirs)


def test_a_small_service_is_read_exactly(clickhouse, alpha, monkeypatch):
    monkeypatch.setattr(scope_, "SKETCH_MIN_ATTEMPTS", 50_000)
    project, key = alpha
    sent = shared(project, key, "healthy", "10m")
    start, end = long_window(project, sent)
    [theirs] = exact("bucket_distribution", project, sent, start, end)
    assert queries.bucket_distribution(Scope(project.id, sent.service, start, end))["buckets"]["ttft"]["p95"] == theirs["ttft_q"][1]


def test_a_tenant_filter_reads_every_attempt(clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base="noisy_tenant", duration="10m", seed=13)
    start, end = long_window(project, sent)
    tenant = queries.tenant_tails(Scope(project.id, sent.service, start, end))[0]["tenant"]
    ours = queries.bucket_distribution(Scope(project.id, sent.service, start, end, tenant=tenant))
    [theirs] = exact("bucket_distribution", project, sent, start, end, tenant=tenant)
    assert ours["buckets"]["ttft"]["p95"] == theirs["ttft_q"][1]  # exact, not sketched



def test_incident_detection_reads_exact_series(clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base="queue_backlog", duration="10m", seed=14)
    start, end = long_window(project, sent)
    ours = queries.incident_series(Scope(project.id, sent.service, start, end), exact=True)
    theirs = exact("incident_series", project, sent, start, end, instance="")
    assert [p["ttft"]["p95"] for p in ours] == [r["ttft_q"][1] if r["ttft_count"] else None for r in theirs]


@pytest.mark.parametrize("by_route", [False, True])
def test_sketched_tenant_tails_keep_the_same_tenants_and_counts(by_route, clickhouse, alpha):
    """Without a route the core is read from tenant_service_hours (over routes), with one from tenant_hours."""
    from store import client
    project, key = alpha
    # a route holds part of the traffic: longer, for as many values
    sent = send_simulated(project, key, base="noisy_tenant", duration="45m" if by_route else "20m", seed=SEED)
    start, end = long_window(project, sent)
    # the busiest route (any(route) took whichever came first: once a route of 647 requests, short of MIN_COUNT)
    route = client.query_rows("SELECT route FROM request_buckets WHERE project_id = {p:UInt32} "
                              "GROUP BY route ORDER BY count() DESC, route LIMIT 1",
                              parameters={"p": project.id})[0][0] if by_route else ""
    args = dict(limit=1, keep=["tenant-x"], min_count=20, ttft_p95_ms=None, total_p95_ms=None)
    ours = queries.tenant_tails_top(Scope(project.id, sent.service, start, end, route=route), **args)
    theirs = exact("tenant_tails_top", project, sent, start, end, limit=1, keep=["tenant-x"], min_count=20,
                   ttft_p95_ms=float("inf"), total_p95_ms=float("inf"), route=route)
    assert [(r["tenant"] if r["others"] is None else None, r["requests"], r["others"]) for r in ours] == [
        (r["tenant_or_others"] if r["is_top"] else None, r["requests"], None if r["is_top"] else r["folded"])
        for r in theirs]
    assert ours[-1]["others"] and ours[-1]["requests"] > MIN_COUNT
    compared = 0
    for got, want in zip(ours, theirs):
        for name in ("total", "ttft", "t_queue"):
            assert got[name]["count"] == want[f"{name}_count"]
            if want[f"{name}_count"] >= MIN_COUNT:
                assert got[name]["p95"] == pytest.approx(want[f"{name}_q"][0], rel=TOLERANCE, abs=0.5), name
                compared += 1
    assert compared >= 2


def test_sketched_routes_keep_their_counts(clickhouse, alpha):
    project, key = alpha
    sent = shared(project, key, "healthy", "10m")
    start, end = long_window(project, sent)
    ours = queries.bucket_distribution_top_values(Scope(project.id, sent.service, start, end), "route", 1)
    theirs = exact("bucket_distribution_top_values", project, sent, start, end, dimension="route", limit=1)
    assert [(r["value"], r["requests"], r["others"], r["buckets"]["total"]["count"]) for r in ours] == [
        (r["value"] if r["is_top"] else OTHERS, r["requests"], None if r["is_top"] else r["folded"], r["total_count"])
        for r in theirs]
    assert ours[0]["buckets"]["total"]["mean"] == pytest.approx(theirs[0]["total_mean"], rel=1e-9)


def test_a_service_left_out_of_the_sketches_is_read_exactly(clickhouse, alpha):
    project, key = alpha
    sent = shared(project, key, "healthy", "10m")
    start, end = long_window(project, sent)
    def chosen():
        return Scope(project.id, sent.service, start, end).sketched("bucket_distribution")[0]
    assert chosen() == "bucket_distribution_sketch"
    clickhouse.command("ALTER TABLE bucket_hours DELETE WHERE 1 SETTINGS mutations_sync = 1")  # as past the 1000th
    assert chosen() == "bucket_distribution"
    [theirs] = exact("bucket_distribution", project, sent, start, end)
    assert queries.bucket_distribution(Scope(project.id, sent.service, start, end))["buckets"]["ttft"]["p95"] == theirs["ttft_q"][1]


@pytest.mark.parametrize("preset", ["queue_backlog", "retry_amplification"])
def test_sketched_request_shares_keep_counts_and_stay_within_one_percent(preset, clickhouse, alpha):
    import math
    project, key = alpha
    sent = shared(project, key, preset, "20m")
    start, end = long_window(project, sent)
    assert Scope(project.id, sent.service, start, end).sketched("request_shares")[0] == "request_shares_sketch"
    ours = queries.request_shares(Scope(project.id, sent.service, start, end))
    [theirs] = exact("request_shares", project, sent, start, end)
    assert set(ours) == set(theirs)
    compared = 0
    for name, want in theirs.items():
        if name.endswith("_n") or name == "shared":
            assert ours[name] == want, name
            continue
        for got, value in zip(ours[name] if isinstance(want, list) else [ours[name]], want if isinstance(want, list) else [want]):
            if value is None or not math.isfinite(value):
                assert got is None, name
                continue
            assert got == pytest.approx(value, rel=TOLERANCE, abs=1e-4), name
            compared += 1
    assert ours["shared"] > MIN_COUNT and compared >= 8


@pytest.mark.parametrize("preset,seed", [("queue_backlog", 21), ("noisy_tenant", 22)])
def test_sketched_segments_keep_counts_and_stay_within_one_percent(preset, seed, clickhouse, alpha, settings):
    project, key = alpha
    sent = send_simulated(project, key, base=preset, duration="30m", seed=seed)
    start, end = long_window(project, sent)
    edges = list(settings.ANALYSIS_SEGMENT_EDGES)
    assert Scope(project.id, sent.service, start, end).sketched(
        "bucket_distribution_by_segment", cover="segmented", edges=edges)[0] == "bucket_distribution_by_segment_sketch"
    ours = queries.bucket_distribution_by_segment(Scope(project.id, sent.service, start, end), edges)
    theirs = exact("bucket_distribution_by_segment", project, sent, start, end, edges=edges)
    labels = queries.segment_labels(edges)
    assert [r["segment"] for r in ours] == [labels[t["segment"]] if t["segment"] >= 0 else "unknown" for t in theirs]
    assert len(ours) >= 2
    compared = 0
    for got, want in zip(ours, theirs):
        assert got["requests"] == want["requests"]
        for name in buckets.ALL:
            count = int(want[f"{name}_count"])
            assert got["buckets"][name]["count"] == count
            if count:
                assert got["buckets"][name]["mean"] == pytest.approx(want[f"{name}_mean"], rel=1e-9)
            if count >= MIN_COUNT:
                for level, value in zip(("p50", "p95"), want[f"{name}_q"]):
                    assert got["buckets"][name][level] == pytest.approx(value, rel=TOLERANCE, abs=0.5), (name, level)
                    compared += 1
    assert compared >= 4


def test_segments_cut_at_other_edges_are_read_exactly(clickhouse, alpha, settings):
    """segment_hours holds the segments of the edges configured when an hour was aggregated: other edges, asked for
    or configured since, read every attempt."""
    project, key = alpha
    sent = shared(project, key, "queue_backlog", "20m")
    start, end = long_window(project, sent)
    configured = list(settings.ANALYSIS_SEGMENT_EDGES)

    def chosen(edges):
        return Scope(project.id, sent.service, start, end).sketched(
            "bucket_distribution_by_segment", sketchable=edges == list(settings.ANALYSIS_SEGMENT_EDGES), cover="segmented",
            edges=edges)[0]
    assert chosen(configured) == "bucket_distribution_by_segment_sketch"
    assert chosen([500, 2000]) == "bucket_distribution_by_segment"
    settings.ANALYSIS_SEGMENT_EDGES = (500, 2000)  # changed after the hours were aggregated
    assert chosen([500, 2000]) == "bucket_distribution_by_segment"
    ours = queries.bucket_distribution_by_segment(Scope(project.id, sent.service, start, end), [500, 2000])
    theirs = exact("bucket_distribution_by_segment", project, sent, start, end, edges=[500, 2000])
    assert [r["buckets"]["ttft"]["p95"] for r in ours] == [t["ttft_q"][1] for t in theirs]
    aggregates.refresh(project.id, start, end)  # aggregated again at the new edges
    assert chosen([500, 2000]) == "bucket_distribution_by_segment_sketch"
    assert chosen(configured) == "bucket_distribution_by_segment"


def test_sketched_neighbours_queue_keeps_counts_and_stays_within_one_percent(clickhouse, alpha):
    """others_t_queue of a long window merges the other tenants' t_queue sketches (tenant_service_hours)."""
    project, key = alpha
    sent = shared(project, key, "noisy_tenant", "20m")
    start, end = long_window(project, sent)
    tenants = [r["tenant"] for r in queries.tenant_tails(Scope(project.id, sent.service, start, end))][:3] + ["nobody"]
    assert Scope(project.id, sent.service, start, end).sketched("others_t_queue", tenants=tenants)[0] == "others_t_queue_sketch"
    ours = queries.others_t_queue(Scope(project.id, sent.service, start, end), tenants)
    theirs = {r["tenant"]: r for r in exact("others_t_queue", project, sent, start, end, tenants=tenants)}
    assert list(ours) == tenants and len(theirs) == 4
    for tenant in tenants:
        assert theirs[tenant]["others_count"] > MIN_COUNT
        assert ours[tenant] == pytest.approx(theirs[tenant]["others_t_queue_p95"], rel=TOLERANCE, abs=0.5), tenant
    assert ours["nobody"] != ours[tenants[0]] or theirs["nobody"]["others_t_queue_p95"] == theirs[tenants[0]]["others_t_queue_p95"]


@pytest.mark.parametrize("width_ms,route", [(900_000, ""), (600_000, "a route"), (120_000, "")])
def test_the_overview_series_of_every_route_merges_five_minute_rows_to_the_same_answer(width_ms, route, clickhouse, alpha):
    """overview_five_minutes holds bucket_minutes' states merged per service and five minutes: a series of every
    route in buckets of whole five minutes reads it, with the same points, quantiles included, as the minutes give
    (a route, or buckets of 2 minutes, read the minutes); store migration 0042 fills it for hours aggregated before."""
    from pathlib import Path

    from store import client
    project, key = alpha
    sent = shared(project, key, "queue_backlog", "20m")
    start, end = long_window(project, sent)
    if route:  # one of the simulated routes
        [(route,)] = client.query_rows("SELECT any(route) FROM request_buckets WHERE project_id = {p:UInt32} AND route != ''",
                                       parameters={"p": project.id})
    name, params = Scope(project.id, sent.service, start, end, route).sketched(
        "overview_series", width_ms=width_ms, five=int(width_ms % 300_000 == 0))
    assert name == "overview_series_sketch"
    from_minutes = client.query(queries._sql(name), parameters={**params, "five": 0})
    ours = queries.overview_series(Scope(project.id, sent.service, start, end, route=route), width_ms)
    assert len(ours) == len(from_minutes) >= 2 and sum(p["requests"] for p in ours) > 1000
    for point, row in zip(ours, from_minutes):
        assert point["requests"] == row["requests"] and point["errors"] == row["errors"]
        assert [point["ttft"][k] for k in ("p50", "p95", "p99")] == pytest.approx(list(row["ttft_q"]), rel=1e-12)
        assert [point["total"][k] for k in ("p50", "p95", "p99")] == pytest.approx(list(row["total_q"]), rel=1e-12)
    client.command("TRUNCATE TABLE overview_five_minutes")
    emptied = queries.overview_series(Scope(project.id, sent.service, start, end, route=route), width_ms)
    assert (emptied != ours) == (not route and width_ms % 300_000 == 0)  # only then are the rows read
    client.command((Path(__file__).parents[2] / "store/migrations/0042_fill_overview_five_minutes.sql").read_text())
    assert queries.overview_series(Scope(project.id, sent.service, start, end, route=route), width_ms) == ours
