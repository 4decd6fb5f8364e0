"""The stored scheduler minutes (analysis/rollups/aggregates.py) against the sweep they replace, on random traffic.

Random attempts go straight into request_buckets (queue waits and slot times up to minutes, so many cross minute
and hour edges; caps that change, an instance that never reports one, attempts without admitted_at), the hours are
aggregated, and scheduler_sweep over windows with and without an aggregated core must equal the reference sweep
(tests/analysis/scheduler_sweep_reference.sql, every attempt swept at once) on every bucket and tenant.
"""
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from analysis.evidence_types import OTHERS
from analysis.reads import queries
from analysis.rollups import aggregates
from analysis.scope import Scope
from analysis.windows import utc_naive
from tests.helpers import publish_buckets

H0 = datetime(2026, 3, 2, 8)
SVC = "svc"
REFERENCE = (Path(__file__).parent / "scheduler_sweep_reference.sql").read_text()

# {n} random attempts over 4 hours from H0 on 3 instances; sipHash of the row number and {seed} draws each value
RANDOM_ATTEMPTS = """
INSERT INTO request_buckets (project_id, service, instance, tenant, route, model, run_id, trace_id, span_id, attempt,
    status, retry_cause, cap, start_at, queued_at, admitted_at, released_at, is_final_attempt, run_attempt_count,
    computed_at)
SELECT {pid:UInt32}, 'svc', concat('i', toString(sipHash64(number, {seed:UInt64}, 1) % 3)) AS inst,
    concat('t', toString(sipHash64(number, {seed:UInt64}, 2) % 7)), '', '', '', hex(number), hex(sipHash64(number)), 1,
    'ok', '',
    multiIf(inst = 'i2', NULL, inst = 'i1' AND q >= {h0:DateTime64(9, 'UTC')} + INTERVAL 2 HOUR, 2, 4),
    q, q,
    if(sipHash64(number, {seed:UInt64}, 3) % 10 = 0, NULL, q + toIntervalMillisecond(sipHash64(number, {seed:UInt64}, 4) % 90000)) AS a,
    coalesce(a, q) + toIntervalMillisecond(sipHash64(number, {seed:UInt64}, 5) % 120000),
    1, 1, now64(3)
FROM (SELECT number, {h0:DateTime64(9, 'UTC')} + toIntervalMillisecond(sipHash64(number, {seed:UInt64}) % 14400000) AS q
      FROM numbers({n:UInt64}))
"""


@pytest.fixture
def traffic(clickhouse, alpha):
    def go(seed, n=1500):
        pid = alpha[0].id
        clickhouse.command(RANDOM_ATTEMPTS, parameters={"pid": pid, "seed": seed, "n": n, "h0": H0})
        publish_buckets(pid)
        aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
        return pid
    return go


def reference(clickhouse, pid, start, end, bucket_ms, limit):
    rows = clickhouse.query(REFERENCE, parameters={"project_id": pid, "service": SVC, "start": start, "end": end,
                                                   "bucket_ms": bucket_ms, "limit": limit})
    end_ms = (end - datetime(1970, 1, 1)).total_seconds() * 1000
    # the reference leaves a row of zero-length steps in the bucket at the window's end: not part of the window
    return [r for r in rows if not r["is_instance_row"] or r["bucket_start_ms"] < end_ms]


def keyed(rows, *keys):
    return {tuple(r[k] for k in keys): r for r in rows}


def assert_same(got, want, fields):
    assert set(got) == set(want)
    for key, row in want.items():
        for name, theirs in fields.items():
            ours = got[key][name]
            if theirs(row) is None or ours is None:
                assert ours == theirs(row), (key, name)
            else:
                assert ours == pytest.approx(theirs(row), rel=1e-9, abs=1e-6), (key, name)


INSTANCE_FIELDS = {
    "cap": lambda r: r["cap"], "backlog_ms": lambda r: r["backlog_ms_sum"], "gap_ms": lambda r: r["gap_ms_sum"],
    "capped_backlog_ms": lambda r: r["capped_backlog_ms"], "uncapped_backlog_ms": lambda r: r["uncapped_backlog_ms"],
    "queue_ms": lambda r: r["queue_ms_sum"], "in_flight_ms": lambda r: r["in_flight_ms_sum"],
    "covered_ms": lambda r: r["covered_ms_sum"], "queue_max": lambda r: r["queue_max_all"],
    "in_flight_max": lambda r: r["in_flight_max_all"],
}
TENANT_FIELDS = {"in_flight_backlog_ms": lambda r: r["in_flight_backlog_ms_sum"], "attempts": lambda r: r["attempts_sum"]}

WINDOWS = [
    # (start, end, bucket_ms, has an aggregated core)
    (H0, H0 + timedelta(hours=4), 60_000, True),                    # whole hours: all from the stored minutes
    (H0 + timedelta(minutes=17, seconds=23.5), H0 + timedelta(hours=3, minutes=41), 300_000, True),  # cut edges
    (H0 + timedelta(minutes=50), H0 + timedelta(hours=2, minutes=5), 3_600_000, True),  # one whole hour, long edges
    (H0 + timedelta(hours=1, minutes=3), H0 + timedelta(hours=1, minutes=58), 60_000, False),  # no whole hour
    (H0, H0 + timedelta(hours=2), 15_000, True),                    # buckets finer than a minute: swept all the same
]


@pytest.mark.parametrize("seed", [1, 7])
@pytest.mark.parametrize("start,end,bucket_ms,core", WINDOWS)
def test_stored_minutes_equal_the_sweep(traffic, clickhouse, seed, start, end, bucket_ms, core):
    pid = traffic(seed)
    cut = aggregates.split(pid, start, end)
    assert (cut.core_start < cut.core_end) == core
    ours = queries.scheduler_sweep(Scope(pid, SVC, start, end), bucket_ms)
    theirs = reference(clickhouse, pid, start, end, bucket_ms, queries.UINT32_MAX)
    epoch = datetime(1970, 1, 1)
    got = keyed([{**r, "ms": (utc_naive(r["bucket_start"]) - epoch).total_seconds() * 1000} for r in ours["instances"]],
                "instance", "ms")
    want = keyed([{**r, "ms": float(r["bucket_start_ms"])} for r in theirs if r["is_instance_row"]], "instance_name", "ms")
    assert len(want) > 3 and any(r["gap_ms_sum"] > 0 for r in want.values())
    assert_same(got, want, INSTANCE_FIELDS)
    assert_same(keyed(ours["tenants"], "tenant"),
                keyed([r for r in theirs if not r["is_instance_row"]], "tenant_name"), TENANT_FIELDS)


def test_pooled_rows_equal_the_sweep(traffic, clickhouse):
    pid = traffic(3)
    start, end = H0 + timedelta(minutes=10), H0 + timedelta(hours=4)
    ours = queries.scheduler_sweep(Scope(pid, SVC, start, end), 600_000, limit=1)
    theirs = reference(clickhouse, pid, start, end, 600_000, 1)
    others = [r for r in ours["instances"] if r["others"] is not None]
    assert others and others[0]["others"] == 2
    got = keyed([{**r, "ms": (utc_naive(r["bucket_start"]) - datetime(1970, 1, 1)).total_seconds() * 1000}
                 for r in ours["instances"]], "others", "ms")
    want = keyed([{**r, "others": int(r["folded"]) if r["is_others"] else None, "ms": float(r["bucket_start_ms"])}
                  for r in theirs if r["is_instance_row"]], "others", "ms")
    assert_same(got, want, INSTANCE_FIELDS)
    assert [(t["tenant"], t["others"]) for t in ours["tenants"]] == [
        (OTHERS if r["is_others"] else r["tenant_name"], int(r["folded"]) if r["is_others"] else None)
        for r in theirs if not r["is_instance_row"]]


def test_a_reaggregated_hour_leaves_no_stale_rows(traffic, clickhouse):
    pid = traffic(5)
    start, end = H0, H0 + timedelta(hours=4)
    before = queries.scheduler_sweep(Scope(pid, SVC, start, end), 3_600_000)
    # every attempt of instance i0 leaves; its hours are aggregated anew and i0 must be gone, not left over
    clickhouse.command("ALTER TABLE request_buckets DELETE WHERE instance = 'i0' SETTINGS mutations_sync = 1")
    aggregates.refresh(pid, start, end)
    after = queries.scheduler_sweep(Scope(pid, SVC, start, end), 3_600_000)
    assert "i0" in {r["instance"] for r in before["instances"]}
    assert "i0" not in {r["instance"] for r in after["instances"]}


def test_sweeps_of_several_services_in_one_read_equal_each_read_alone(traffic, clickhouse, alpha):
    """scheduler_sweeps (the diagnose jobs' batches, analysis/reads/sweeps.py) ranks and pools each service on its own: one
    read of three services equals three reads of one, with and without a core, bounded or not; an empty list pools
    every service as one."""
    pid = traffic(1)
    for seed, service in ((2, "svc-b"), (5, "svc-c")):
        clickhouse.command(RANDOM_ATTEMPTS.replace("'svc'", "{svc:String}"),
                           parameters={"pid": pid, "seed": seed, "n": 900, "h0": H0, "svc": service})
    publish_buckets(pid)
    aggregates.refresh(pid, H0, H0 + timedelta(hours=4))
    services = [SVC, "svc-b", "svc-c"]
    for start, end, bucket_ms, _ in WINDOWS[1:4]:
        for limit in (None, 1):
            alone = {s: queries.scheduler_sweep(Scope(pid, s, start, end), bucket_ms, limit) for s in services}
            assert queries.scheduler_sweeps(Scope(pid, "", start, end), services, bucket_ms, limit) == alone
            assert alone[SVC] != alone["svc-b"] and all(alone[s]["instances"] for s in services)
            assert queries.scheduler_sweeps(Scope(pid, "", start, end), ["svc-c", "none"], bucket_ms, limit) == {
                "svc-c": alone["svc-c"], "none": {"instances": [], "tenants": []}}
    pooled = queries.scheduler_sweep(Scope(pid, "", *WINDOWS[1][:2]), WINDOWS[1][2])
    every = [queries.scheduler_sweep(Scope(pid, s, *WINDOWS[1][:2]), WINDOWS[1][2]) for s in services]
    assert sum(t["attempts"] for t in pooled["tenants"]) == sum(t["attempts"] for one in every for t in one["tenants"])
    assert sum(r["backlog_ms"] for r in pooled["instances"]) == pytest.approx(
        sum(r["backlog_ms"] for one in every for r in one["instances"]))
