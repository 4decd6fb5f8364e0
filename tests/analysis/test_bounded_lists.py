"""Lists that grow with cardinality stop at a fixed size: the N largest entries plus one "__others__" entry pooling
the rest, bounded in the SQL; the diagnosis never takes that entry for a tenant; the API answer stays small."""
import json
from datetime import timedelta

import pytest

from analysis.diagnosis.flowchart import tenant_findings
from analysis.diagnosis.service import run_diagnosis
from analysis.diagnosis.thresholds import DEFAULT
from analysis.evidence_types import OTHERS, Buckets, NoisyNeighbour, TenantTail
from analysis.reads import queries
from analysis.scope import Scope
from tests import factories as f
from tests.analysis.test_queries import _scheduler_fixture, buckets, send  # noqa: F401 (fixtures)

DAY = timedelta(days=1)
SVC = "llm-gateway"
WINDOW = (f.BASE - DAY, f.BASE + DAY)


def _tails(pid, limit, **kwargs):
    return [(r["tenant"], r["requests"], r["others"], r["t_queue"]["p95"])
            for r in queries.tenant_tails_top(Scope(pid, SVC, *WINDOW), limit, **kwargs)]


def test_tenant_tails_keep_the_busiest_then_one_row_pooling_the_rest(send):
    # a: 3 attempts, b: 2, c: 1 (t_queue 10 ms each); d: 1 attempt queued 5 s (total 5000 + 300 + 900 + 15 = 6215)
    spans = [f.attempt(tenant=t, t_queue_ms=10) for t in ("a", "a", "a", "b", "b", "c")]
    pid = send(f.request(*spans, f.attempt(tenant="d", t_queue_ms=5000)))
    # c and d pooled: t_queue 10 and 5000 -> p95 10 + 0.95 x 4990 = 4750.5
    assert _tails(pid, 2) == [("a", 3, None, 10), ("b", 2, None, 10), (OTHERS, 2, 2, pytest.approx(4750.5))]
    # d is an outlier candidate (total p95 6215 >= 6000 with >= 1 attempt): kept before the busier b
    assert _tails(pid, 2, min_count=1, total_p95_ms=6000) == [("a", 3, None, 10), ("d", 1, None, 5000),
                                                             (OTHERS, 3, 2, 10)]
    # a noisy candidate is kept whatever its requests
    assert [t for t, *_ in _tails(pid, 2, keep=["c"])] == ["a", "c", OTHERS]
    assert [t for t, *_ in _tails(pid, 10)] == ["a", "b", "c", "d"]  # nothing left over: no pooled row


def test_grouping_by_route_keeps_the_busiest_values_and_pools_the_rest(send):
    pid = send(f.request(*[f.attempt(route=r, t_queue_ms=q) for r, q in (("/a", 10), ("/a", 20), ("/b", 30),
                                                                        ("/c", 50))]))
    rows = queries.bucket_distribution_top_values(Scope(pid, SVC, *WINDOW), "route", 1)
    # /a has two attempts; /b and /c pooled: t_queue p50 of 30 and 50 -> 40
    assert [(r["value"], r["requests"], r["others"], r["buckets"]["t_queue"]["p50"]) for r in rows] == [
        ("/a", 2, None, 15), (OTHERS, 2, 2, 40)]


def test_the_sweep_keeps_the_instances_with_most_backlog_and_pools_the_rest(send):
    pid = send(*_scheduler_fixture())
    whole = queries.scheduler_sweep(Scope(pid, SVC, *WINDOW), bucket_ms=60_000)
    bounded = queries.scheduler_sweep(Scope(pid, SVC, *WINDOW), bucket_ms=60_000, limit=1)
    # gw-1 and gw-2 both have 2 s of backlog; gw-1 had more in flight, so it keeps its row and gw-2 is pooled
    assert [(r["instance"], r["others"], r["backlog_ms"], r["gap_ms"]) for r in bounded["instances"]] == [
        ("gw-1", None, 2000, 1000), (OTHERS, 1, 2000, 2000)]
    # acme held the only slot time during backlog; globex is pooled
    assert [(r["tenant"], r["others"], r["in_flight_backlog_ms"]) for r in bounded["tenants"]] == [
        ("acme", None, 1000), (OTHERS, 1, 0)]
    assert [r["instance"] for r in whole["instances"]] == ["gw-1", "gw-2"]


def test_bounded_evidence_pools_the_rest_and_the_diagnosis_names_no_others(send, settings):
    settings.ANALYSIS_TOP_N = 1
    pid = send(*_scheduler_fixture())
    answer = json.loads(json.dumps(run_diagnosis(Scope(pid, SVC, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=1)))))
    ev = answer["evidence"]
    # pooled gap_fraction is unchanged: 3 of 4 backlog seconds under cap -> 0.75; gw-2 (cap 2, 2 of 2 s) pooled
    assert ev["gap_fraction"]["service"] == 0.75
    assert ev["gap_fraction"]["instances"] == {
        "gw-1": {"gap_fraction": 0.5, "backlog_seconds": 2.0, "cap": 1},
        OTHERS: {"gap_fraction": 1.0, "backlog_seconds": 2.0, "cap": None, "values": 1}}
    # acme (kept: the noisy candidate) and globex (pooled) have two attempts each
    assert [(t["tenant"], t["count"], t.get("values")) for t in ev["tenants"]] == [("acme", 2, None), (OTHERS, 2, 1)]
    assert [(n["tenant"], n["in_flight_share_during_backlog"], n.get("values")) for n in ev["noisy_neighbours"]] == [
        ("acme", 1.0, None), (OTHERS, 0.0, 1)]
    assert all(finding.get("tenant") != OTHERS for finding in answer["findings"])


def test_no_tenant_finding_names_the_pooled_entry():
    service = Buckets.from_json({"ttft": {"p95": 100.0, "count": 100}, "total": {"p95": 1000.0, "count": 100}})
    pooled = TenantTail(tenant=OTHERS, count=900, total_p95=9000.0, total_p99=None, ttft_p95=900.0, ttft_p99=None,
                        t_queue_p95=None, t_queue_p99=None, values=500)
    slots = [NoisyNeighbour(tenant=OTHERS, in_flight_share_during_backlog=0.9, others_t_queue_p95=None, values=500)]
    # 9x the service's p95 over 900 requests, and 90 % of busy slots: a tenant would be flagged twice
    assert tenant_findings(service, [pooled], slots, DEFAULT) == []


@pytest.fixture
def crowd(send):
    """2,000 attempts 1 s apart, each of its own tenant, in pairs on 300 instances of cap 1."""
    spans = [f.attempt(tenant=f"tenant-{i:04}", start_ns=f.BASE_NS + i * 1000 * f.MS,
                       attributes={"service.instance.id": f"gw-{i // 2 % 300:03}", "llm.scheduler.cap": 1})
             for i in range(2000)]
    return send(f.request(*spans))


def test_the_api_answer_stays_small_with_2000_tenants(client, alpha, crowd, settings):
    settings.ANALYSIS_TOP_N = 20
    _, key = alpha
    response = client.get("/api/v1/diagnosis", {"service": SVC, "start": "2026-01-05T09:00:00Z",
                                                "end": "2026-01-05T11:00:00Z"}, headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200
    assert len(response.content) < 30_000
    ev = response.json()["evidence"]
    assert ev["requests"] == 2000
    assert len(ev["tenants"]) == 21 and ev["tenants"][-1] == {**ev["tenants"][-1], "tenant": OTHERS, "count": 1980,
                                                               "values": 1980}
    assert len(ev["noisy_neighbours"]) == 21 and ev["noisy_neighbours"][-1]["values"] == 1980
    assert len(ev["gap_fraction"]["instances"]) == 21 and ev["gap_fraction"]["instances"][OTHERS]["values"] == 280
