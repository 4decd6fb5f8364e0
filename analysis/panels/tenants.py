"""The Tenants page's numbers, shaped by the same analysis.diagnosis.evidence functions the diagnosis reads (tenant
tails, the noisy-neighbour slot shares, arrival shares) and judged by the same tenant findings, so the page and the
verdict never disagree.

Cheaper than analysis.diagnosis.evidence.collect: four queries (service distribution, sweep, others' t_queue, tails).
Bounded whatever the number of tenants: the SQL returns DASHBOARD_TABLE_ROWS tails and ANALYSIS_TOP_N slot shares,
each with one row pooling the rest.
"""
from dataclasses import dataclass, replace
from datetime import timedelta

from django.conf import settings

from analysis.diagnosis import evidence
from analysis.diagnosis import flowchart as diagnosis
from analysis.diagnosis.thresholds import Thresholds, configured
from analysis.evidence_types import Buckets, NoisyNeighbour, TenantTail, is_others
from analysis.reads import queries
from analysis.scope import Scope
from analysis.stats import ratio
from store.concurrent import gather

CHART_TENANTS = 20
UINT32_MAX = 2**32 - 1
# The sweep replays every attempt's events in order: over a day of a busy service that takes seconds, so
# longer windows get the noisy-neighbour evidence on request only.
NOISY_MAX_WINDOW = timedelta(hours=6)


@dataclass(frozen=True)
class Tenants:
    """See build()."""
    rows: list[dict]
    others: dict | None
    noisy: list[dict]
    noisy_others: dict | None
    tenants: int
    requests: int
    service: Buckets
    findings: list[dict]
    thresholds: Thresholds


def build(scope: Scope, noisy: bool = True) -> Tenants:
    """Over every tenant of the scope's service and route (its tenant is not applied: the page compares tenants):
    rows, others, tenants (how many in all), requests, service (its Buckets), findings, noisy, noisy_others,
    thresholds.

    rows: per tenant, most requests first, at most DASHBOARD_TABLE_ROWS (outliers and noisy candidates kept first,
    as in the diagnosis): tenant, requests, share_pct (of all requests), ttft / total p95 and p99, t_queue_p95,
    ttft_ratio (its TTFT p95 over the service's), codes (its findings); others: the same for the rest pooled
    (with "values": how many tenants), None when nothing is left over.
    noisy: per tenant, most busy-slot time during backlog first (ANALYSIS_TOP_N): slot_share and arrival_share
    (0..1), slots_per_arrival, others_t_queue_p95 (measured for the evidence.NOISY_TOP first), codes; noisy_others:
    the rest pooled. Empty when no instance had a queue, or when not `noisy` (then the sweep is skipped and there
    are no noisy findings). The sweep covers the whole service whatever the route (an instance's queue is every
    route's).
    """
    scope = replace(scope, tenant="")
    thresholds = configured()
    # the service's distribution and the sweep side by side (store/concurrent.py); the tails need both
    dist, neighbours = gather(lambda: queries.bucket_distribution(scope),
                              lambda: noisy_neighbours(scope) if noisy else [])
    buckets = Buckets.from_json(dist["buckets"])
    keep = [n.tenant for n in neighbours if not is_others(n)][:evidence.NOISY_TOP]
    top = evidence.tenants(queries.tenant_tails_top(scope, settings.DASHBOARD_TABLE_ROWS,
                                                    keep=keep, **evidence.outlier_floors(buckets, thresholds)))
    findings = diagnosis.tenant_findings(buckets, top, neighbours, thresholds)
    codes: dict[str, list[str]] = {}
    for finding in findings:
        codes.setdefault(finding["tenant"], []).append(finding["code"])
    arrivals = evidence.arrival_shares(top)
    rows = [{"tenant": t.tenant, "values": t.values, "requests": t.count, "share_pct": 100 * arrivals[t.tenant],
             "ttft_p95": t.ttft_p95, "ttft_p99": t.ttft_p99, "total_p95": t.total_p95, "total_p99": t.total_p99,
             "t_queue_p95": t.t_queue_p95, "ttft_ratio": ratio(t.ttft_p95, buckets.ttft.p95),
             "codes": [] if is_others(t) else codes.get(t.tenant, [])} for t in top]
    slots = [{"tenant": n.tenant, "values": n.values, "slot_share": n.in_flight_share_during_backlog,
              "arrival_share": None if is_others(n) else arrivals.get(n.tenant, 0.0),
              "slots_per_arrival": None if is_others(n) else ratio(n.in_flight_share_during_backlog,
                                                                   arrivals.get(n.tenant)),
              "others_t_queue_p95": n.others_t_queue_p95, "codes": [] if is_others(n) else codes.get(n.tenant, [])}
             for n in neighbours]
    return Tenants(**_split("rows", "others", rows), **_split("noisy", "noisy_others", slots),
                   tenants=sum(t.values or 1 for t in top), requests=sum(t.count for t in top), service=buckets,
                   findings=findings, thresholds=thresholds)


def tails(scope: Scope) -> list[TenantTail]:
    """Every tenant's tails over the scope's service and route (its tenant is not applied), most requests first:
    count, TTFT / total / t_queue p95 and p99 in ms, exact and unbounded (queries.tenant_tails): the rows build()
    bounds and pools. The cheap entry point of the weekly review and the tenant_tail alert kind: no service
    distribution, no noisy-neighbour sweep."""
    return evidence.tenants(queries.tenant_tails(scope))


def _split(name: str, pooled: str, rows: list[dict]) -> dict:
    """{name: the rows of single tenants, pooled: the row pooling the rest or None}."""
    return {name: [r for r in rows if r["values"] is None],
            pooled: next((r for r in rows if r["values"] is not None), None)}


def noisy_neighbours(scope: Scope) -> list[NoisyNeighbour]:
    """The diagnosis's noisy-neighbour evidence of the scope's whole service (an instance's queue is every route's):
    per tenant (ANALYSIS_TOP_N, then the rest pooled), its slot time held during backlog, largest first."""
    # It does not depend on the sweep's bucket width: few buckets keep the sweep small, and whole minutes (at most
    # two buckets per window) let it read the stored minutes (analysis/rollups/aggregates.py).
    minutes = -(-int((scope.end - scope.start).total_seconds()) // 60)
    width = min(UINT32_MAX // 60_000 * 60_000, max(60_000, minutes * 60_000))
    rows = queries.scheduler_sweep(scope, bucket_ms=width, limit=settings.ANALYSIS_TOP_N)["tenants"]
    others = queries.others_t_queue(scope, evidence.noisy_candidates(rows))
    return evidence.noisy_neighbours(rows, others)
