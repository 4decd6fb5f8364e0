"""The Tenants page's numbers, shaped by the same analysis.evidence functions the diagnosis reads (tenant tails,
the noisy-neighbour slot shares, arrival shares) and judged by the same tenant findings, so the page and the
verdict never disagree.

Cheaper than analysis.evidence.collect: four queries (tails, service distribution, sweep, others' t_queue).
"""
from datetime import timedelta

from analysis import diagnosis, evidence, queries
from analysis.evidence_types import Buckets, NoisyNeighbour
from analysis.stats import ratio
from analysis.thresholds import configured

MAX_TENANTS = 500  # table rows; shares stay over every tenant
CHART_TENANTS = 20
UINT32_MAX = 2**32 - 1
# The sweep replays every attempt's events in order: over a day of a busy service that takes seconds, so
# longer windows get the noisy-neighbour evidence on request only.
NOISY_MAX_WINDOW = timedelta(hours=6)


def report(project_id: int, service: str, start, end, route: str = "", noisy: bool = True) -> dict:
    """{"rows", "tenants" (how many in all), "requests", "service" (its Buckets), "findings", "noisy", "thresholds"}.

    rows: per tenant, most requests first, at most MAX_TENANTS: tenant, requests, share_pct (of all requests),
    ttft / total p95 and p99, t_queue_p95, ttft_ratio (its TTFT p95 over the service's), codes (its findings).
    noisy: per tenant, most busy-slot time during backlog first: slot_share and arrival_share (0..1),
    slots_per_arrival, others_t_queue_p95 (measured for the evidence.NOISY_TOP first), codes; empty when no
    instance had a queue, or when not `noisy` (then the sweep is skipped and there are no noisy findings).
    The sweep covers the whole service whatever the route (an instance's queue is every route's).
    """
    args = (project_id, service, start, end)
    tails = evidence.tenants(queries.tenant_tails(*args, route=route))
    buckets = Buckets.from_json(queries.bucket_distribution(*args, route=route)["buckets"])
    neighbours = noisy_neighbours(*args) if noisy else []
    thresholds = configured()
    findings = diagnosis.tenant_findings(buckets, tails, neighbours, thresholds)
    codes: dict[str, list[str]] = {}
    for finding in findings:
        codes.setdefault(finding["tenant"], []).append(finding["code"])
    arrivals = evidence.arrival_shares(tails)
    rows = [{"tenant": t.tenant, "requests": t.count, "share_pct": 100 * arrivals[t.tenant],
             "ttft_p95": t.ttft_p95, "ttft_p99": t.ttft_p99, "total_p95": t.total_p95, "total_p99": t.total_p99,
             "t_queue_p95": t.t_queue_p95, "ttft_ratio": ratio(t.ttft_p95, buckets.ttft.p95),
             "codes": codes.get(t.tenant, [])} for t in tails[:MAX_TENANTS]]
    slots = [{"tenant": n.tenant, "slot_share": n.in_flight_share_during_backlog,
              "arrival_share": arrivals.get(n.tenant, 0.0),
              "slots_per_arrival": ratio(n.in_flight_share_during_backlog, arrivals.get(n.tenant)),
              "others_t_queue_p95": n.others_t_queue_p95, "codes": codes.get(n.tenant, [])}
             for n in neighbours[:MAX_TENANTS]]
    return {"rows": rows, "tenants": len(tails), "requests": sum(t.count for t in tails), "service": buckets,
            "findings": findings, "noisy": slots, "thresholds": thresholds}


def noisy_neighbours(project_id, service, start, end) -> list[NoisyNeighbour]:
    """The diagnosis's noisy-neighbour evidence: per tenant, its slot time held during backlog, largest first."""
    # It does not depend on the sweep's bucket width: one bucket per window keeps the sweep small.
    width = min(UINT32_MAX, max(1000, int((end - start).total_seconds() * 1000)))
    rows = queries.scheduler_sweep(project_id, service, start, end, bucket_ms=width)["tenants"]
    others = queries.others_t_queue(project_id, service, start, end, evidence.noisy_candidates(rows))
    return evidence.noisy_neighbours(rows, others)
