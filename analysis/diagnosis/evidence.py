"""The evidence for one service window: every measurement the diagnosis reads, as an
analysis.evidence_types.Evidence (its to_json() is the "evidence" of the diagnosis answer).

collect() is the only function here that reads the store. Every other function shapes rows that
analysis.reads.queries returns and does no I/O, so the weekly review and the dashboard pages shape their rows
exactly as the diagnosis does. Durations are milliseconds (backlog in seconds where the name says so),
shares are 0..1, and a value that cannot be measured in the window is None, never 0. Reads
request_buckets only (see analysis/rollups/materialize.py), so the window's hours must have been materialized.

Bounded whatever the cardinality: tenants, noisy_neighbours and gap_fraction.instances hold the ANALYSIS_TOP_N
largest entries plus one named OTHERS pooling the rest (evidence_types), and the SQL returns no more than that.
"""
from dataclasses import replace

from django.conf import settings

from analysis import stats

from analysis.reads import engine_series

from analysis.reads import layers

from analysis.reads import queries

from analysis.reads import sweeps
from analysis.buckets import PARTS
from analysis.evidence_types import (
    LEVELS, SEGMENT_BUCKETS, TAIL_BUCKETS, BucketStats, Buckets, Churn, Decode, Dominance, Evidence,
    GapFraction, InstanceGap, NoisyNeighbour, Retries, Segment, Share, Stages, TenantTail, Window,
)
from analysis.diagnosis.thresholds import Thresholds, configured
from analysis.scope import Scope
from store.concurrent import beside, gather

MIN_WINDOW_SUCCESSES = 10  # a 1-minute churn window needs this many successful runs for its p95
NOISY_TOP = 3  # tenants (by in-flight share during backlog) whose neighbours' t_queue p95 is measured
MINUTE_MS = 60_000
HOUR_MS = 3_600_000


def collect(scope: Scope, segment_edges=None) -> Evidence:
    """Evidence for the scope: its service's attempts queued in its window, optionally one route / tenant.

    segment_edges: prompt-length cuts in input tokens (default ANALYSIS_SEGMENT_EDGES). A window without
    attempts has requests 0 and every measure unknown. The scheduler measures (gap_fraction, noisy
    neighbours, retry amplification's queue depth) cover the whole service: an instance's queue is every
    route's and tenant's.
    """
    # the scheduler's reads are the whole service's (see above)
    service = replace(scope, route="", tenant="")
    window_ms, top = (scope.end - scope.start).total_seconds() * 1000, settings.ANALYSIS_TOP_N
    width = stats.series_width_ms(window_ms)
    # the reads that need only the window run side by side, then those that need their answers (store/concurrent.py).
    # The scheduler sweep starts first and runs beside the rest: it is the longest of a window not cut at hours, and
    # only the tenants' reads wait for it; the instance starts begin as soon as the distribution is in.
    with beside(lambda: sweeps.sweep(service, bucket_ms=width, limit=top)) as sweeping:
        minutes, dist, shares, by_segment, retry, engine, layered = gather(
            lambda: queries.churn_windows(scope),
            lambda: queries.bucket_distribution(scope),
            lambda: queries.request_shares(scope),
            lambda: queries.bucket_distribution_by_segment(scope, segment_edges or settings.ANALYSIS_SEGMENT_EDGES),
            lambda: queries.retry_summary(scope),
            lambda: engine_series.summary(service),
            lambda: layers.for_gateway(service).evidence())
        window, buckets = _window(scope), Buckets.from_json(dist["buckets"])
        if not dist["requests"]:
            return _empty(window, buckets)
        thresholds = configured()
        floors = outlier_floors(buckets, thresholds)
        with beside(lambda: queries.instance_starts(service, buckets.ttft.p95, thresholds.cold_start_minutes,
                                                    engine.process_starts)) as starting:
            sweep = sweeping.result()
            candidates = noisy_candidates(sweep["tenants"])
            # the noisy candidates' tails are kept, whatever their requests: their arrival share is what they are
            # judged by
            tails, others = gather(
                lambda: queries.tenant_tails_top(scope, top, keep=candidates, **floors),
                lambda: queries.others_t_queue(service, candidates))
            starts = starting.result()
    return Evidence(
        window=window, requests=dist["requests"], buckets=buckets, dominance=dominance(buckets, shares),
        segments=segments(by_segment), stages=stages(shares), decode=decode(shares),
        gap_fraction=with_engine_gaps(service, gap_fraction(sweep["instances"]), engine),
        churn=churn(minutes), tenants=tenants(tails),
        noisy_neighbours=noisy_neighbours(sweep["tenants"], others),
        retries=retries(buckets.t_retry, retry, amplification(sweep["instances"], minutes, width)),
        success_rate=stats.ratio(retry["successful_runs"], retry["runs"]),
        successful_runs_per_hour=per_hour(retry["successful_runs"], window_ms),
        engine=engine,
        instance_starts=starts["starts"], cold_start_share=starts["share"], layers=layered,
    )


def _window(scope: Scope) -> Window:
    return Window(start=scope.start.isoformat(), end=scope.end.isoformat(),
                  seconds=(scope.end - scope.start).total_seconds(), route=scope.route, tenant=scope.tenant)


def _empty(window: Window, buckets: Buckets) -> Evidence:
    """collect() for a window without attempts: every measure unknown."""
    return Evidence(
        window=window, requests=0, buckets=buckets, dominance=Dominance.from_json({}), segments={},
        stages=stages({}), decode=decode({}), gap_fraction=gap_fraction([]), churn=churn([]), tenants=[],
        noisy_neighbours=[], retries=retries(buckets.t_retry, None, None), success_rate=None,
        successful_runs_per_hour=None,
    )


def per_hour(count: int, window_ms: float) -> float | None:
    """count / window length in hours; None for an empty window."""
    return count / (window_ms / HOUR_MS) if window_ms > 0 else None


def dominance(buckets: Buckets, shares: dict) -> Dominance:
    """Per bucket: p50_share = bucket p50 / total p50, p95_share = bucket p95 / total p95 (quantiles taken
    separately, so shares need not add up to 1), and median_request_share = median over successful
    attempts of bucket / total (t_retry: t_retry / (t_retry + total), over runs; None without
    request_shares, e.g. `shares` {})."""
    total = buckets.total
    return Dominance(**{name: Share(
        p50_share=stats.ratio(getattr(buckets, name).p50, total.p50),
        p95_share=stats.ratio(getattr(buckets, name).p95, total.p95),
        median_request_share=shares.get(f"{name}_share") if shares.get("shared") else None) for name in PARTS})


def segments(rows: list[dict]) -> dict[str, Segment]:
    """label -> Segment (count, p50 / p95 / p99 of SEGMENT_BUCKETS), in the order of the rows."""
    return {row["segment"]: Segment(count=row["requests"], **{
        f"{name}_{level}": row["buckets"][name][level] for name in SEGMENT_BUCKETS for level in LEVELS})
        for row in rows}


def stages(shares: dict) -> Stages:
    """Medians of stage time over t_first_token (prep = tokenize + prompt_build + policy; network) and over
    t_post (post stage spans), retrieval / tool p50 and p95 in ms; None when no such stage span was seen."""
    def known(kind, value):
        return value if shares.get(f"{kind}_n") else None

    retrieval, tool = shares.get("retrieval_q") or [None, None], shares.get("tool_q") or [None, None]
    return Stages(
        prep_share_of_first_token=known("prep", shares.get("prep_share")),
        network_share_of_first_token=known("network", shares.get("network_share")),
        post_stage_share_of_post=known("post_stage", shares.get("post_stage_share")),
        retrieval_ms_p50=known("retrieval", retrieval[0]), retrieval_ms_p95=known("retrieval", retrieval[1]),
        tool_ms_p50=known("tool", tool[0]), tool_ms_p95=known("tool", tool[1]),
    )


def decode(shares: dict) -> Decode:
    """t_stream / (output_tokens - 1) in ms per output token over successful attempts with > 1 output token."""
    n = shares.get("decode_n") or 0
    q = shares.get("ms_per_output_token_q") or [None, None]
    return Decode(ms_per_output_token_p50=q[0] if n else None, ms_per_output_token_p95=q[1] if n else None, count=n)


def gap_fraction(state: list[dict]) -> GapFraction:
    """docs/span-convention.md's gap_fraction per instance and pooled over the service's instances.

    `state`: queries.scheduler_sweep's instance rows. Instance: gap_ms / backlog_ms (None without backlog or
    without a known cap). Service: sum of gap time over sum of backlog time, over instances with a known cap
    (None when that backlog is 0). backlog_seconds: time with queue_depth > 0, summed over all instances.
    Instances by name, then the OTHERS entry of a bounded sweep: its gap_fraction is over its capped instances.
    """
    per = {}
    for row in state:
        acc = per.setdefault(row["instance"], {"cap": None, "backlog_ms": 0.0, "gap_ms": 0.0, "pooled_capped_ms": 0.0,
                                               "values": row.get("others")})
        if row["cap"] is not None:  # rows come in time order: keep the latest cap the instance reported
            acc["cap"] = row["cap"]
        acc["backlog_ms"] += row["backlog_ms"]
        acc["gap_ms"] += row["gap_ms"]
        acc["pooled_capped_ms"] += row.get("capped_backlog_ms", 0.0)
    for a in per.values():  # what gap_fraction divides by: an instance's backlog once it reported a cap; for the
        # pooled entry (cap None), the backlog of its instances that did
        a["capped_ms"] = a["pooled_capped_ms"] if a["values"] else a["backlog_ms"] if a["cap"] is not None else 0.0
    instances = {name: InstanceGap(gap_fraction=stats.ratio(a["gap_ms"], a["capped_ms"]),
                                   backlog_seconds=a["backlog_ms"] / 1000, cap=a["cap"], values=a["values"])
                 for name, a in sorted(per.items(), key=lambda item: (item[1]["values"] is not None, item[0]))}
    return GapFraction(service=stats.ratio(sum(a["gap_ms"] for a in per.values() if a["capped_ms"]),
                                           sum(a["capped_ms"] for a in per.values())),
                       instances=instances, backlog_seconds=sum(a["backlog_ms"] for a in per.values()) / 1000)


def with_engine_gaps(scope: Scope, traced: GapFraction, engine) -> GapFraction:
    """The traces' gap_fraction; when they give none (no queued/admitted events) and the engine reports its queue,
    the engine's (source "engine metrics", caps from the traces where they gave one)."""
    if traced.service is not None or engine.queue_depth_mean is None:
        return traced
    caps = {name: gap.cap for name, gap in traced.instances.items() if gap.cap is not None}
    sampled = engine_series.scheduler_from_metrics(scope, caps)
    if sampled["service"] is None:
        return traced
    instances = {name: InstanceGap(gap_fraction=i["gap_fraction"], backlog_seconds=i["backlog_samples"] * (
        sampled["interval_s"] or 0), cap=i["cap"], values=None) for name, i in sorted(sampled["instances"].items())}
    return GapFraction(service=sampled["service"], instances=instances,
                       backlog_seconds=sum(i.backlog_seconds for i in instances.values()), source="engine metrics")


def churn(minutes: list[dict], min_successes: int = MIN_WINDOW_SUCCESSES) -> Churn:
    """Connection churn vs first-token time over 1-minute windows with >= min_successes successful runs.

    new_connections_per_success is over the whole window (None without a success, or when no attempt says whether
    it reused a connection: unknown, not 0); the Spearman rank
    correlations and the slope (ms of TTFT p95 per new connection per success) are over the kept
    windows, None with fewer than 3 (2 for the slope) or without variance.
    """
    if not any(m.get("connection_known", 1) for m in minutes):
        minutes = [dict(m, new_connections=None) for m in minutes]  # the spans say nothing about connections
    kept = churn_windows_kept(minutes, min_successes)
    successes = sum(m["successes"] for m in minutes)
    x, y = stats.pairs(kept, "new_per_success", "ttft_p95")
    return Churn(
        windows=len(kept),
        new_connections_per_success=stats.ratio(_sum(m["new_connections"] for m in minutes), successes),
        spearman_ttft_p95=stats.spearman(x, y),
        spearman_ttft_stddev=stats.spearman(*stats.pairs(kept, "new_per_success", "ttft_stddev")),
        spearman_first_token_p95=stats.spearman(*stats.pairs(kept, "new_per_success", "t_first_token_p95")),
        slope=stats.slope(x, y),
    )


def churn_windows_kept(minutes: list[dict], min_successes: int = MIN_WINDOW_SUCCESSES) -> list[dict]:
    """The 1-minute windows churn() correlates (>= min_successes successful runs and known connections), with
    new_per_success."""
    return [dict(m, new_per_success=m["new_connections"] / m["successes"]) for m in minutes
            if m["successes"] >= min_successes and m["new_connections"] is not None and m.get("connection_known", 1)]


def _sum(values) -> float | None:
    """sum, None when any value is unknown."""
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def outlier_floors(service: Buckets, thresholds: Thresholds) -> dict:
    """What makes a tenant an outlier candidate (diagnosis.tenant_outliers), as queries.tenant_tails_top's
    arguments: min_count, and TTFT / total p95 floors in ms (None where the service's p95 is unknown)."""
    def floor(stats_: BucketStats):
        return thresholds.tenant_outlier_ratio * stats_.p95 if stats_.p95 else None
    return {"min_count": thresholds.tenant_min_count, "ttft_p95_ms": floor(service.ttft),
            "total_p95_ms": floor(service.total)}


def tenants(rows: list[dict]) -> list[TenantTail]:
    """Per tenant row of queries.tenant_tails(_top): count and p95 / p99 of TAIL_BUCKETS (ms), in the rows' order;
    a pooled row (its "others") is the OTHERS entry with `values`."""
    return [TenantTail(tenant=r["tenant"], count=r["requests"], values=r.get("others"),
                       **{f"{b}_{level}": r[b][level] for b in TAIL_BUCKETS for level in ("p95", "p99")})
            for r in rows]


def arrival_shares(tails: list[TenantTail]) -> dict[str, float]:
    """tenant -> its share of the requests (0..1), over every tenant (an OTHERS entry counts, under its name);
    empty without requests."""
    total = sum(t.count or 0 for t in tails)
    return {t.tenant: (t.count or 0) / total for t in tails} if total else {}


def noisy_candidates(rows: list[dict]) -> list[str]:
    """The tenants (of scheduler_sweep's "tenants" rows, largest first) whose neighbours' t_queue p95 the
    evidence measures (queries.others_t_queue): the NOISY_TOP largest; none without backlog, never a pooled row."""
    if sum(r["in_flight_backlog_ms"] for r in rows) <= 0:
        return []
    return [r["tenant"] for r in rows if not r.get("others")][:NOISY_TOP]


def noisy_neighbours(rows: list[dict], others: dict[str, float | None]) -> list[NoisyNeighbour]:
    """Per tenant of the sweep's rows: its share of in-flight slot time while its instance had a queue (0..1),
    and the other tenants' t_queue p95 (ms) from `others` (None for a tenant not in it). Empty without backlog.
    A pooled row (its "others") is the OTHERS entry with `values`; shares are over every tenant."""
    total = sum(r["in_flight_backlog_ms"] for r in rows)
    if total <= 0:
        return []
    return [NoisyNeighbour(tenant=r["tenant"], in_flight_share_during_backlog=r["in_flight_backlog_ms"] / total,
                           others_t_queue_p95=None if r.get("others") else others.get(r["tenant"]),
                           values=r.get("others")) for r in rows]


def amplification(state: list[dict], minutes: list[dict], width_ms: int):
    """Spearman of retries (attempts > 1) vs mean queue depth (summed over instances) per window of
    max(1 min, series width); None with fewer than 3 windows or without variance."""
    step = max(MINUTE_MS, width_ms)
    depth: dict[int, float] = {}
    for row in state:
        key = int(row["bucket_start"].timestamp() * 1000) // step
        depth[key] = depth.get(key, 0.0) + row["queue_ms"] / step
    retried: dict[int, int] = {}
    for m in minutes:
        key = int(m["minute"].timestamp() * 1000) // step
        retried[key] = retried.get(key, 0) + m["retries"]
    keys = sorted(retried)
    return stats.spearman([retried[k] for k in keys], [depth.get(k, 0.0) for k in keys])


def retries(t_retry: BucketStats, summary: dict | None, spearman_queue) -> Retries:
    """t_retry over runs, rate = mean (attempts - 1) per run and runs with retries share (both over the runs whose
    attempts are known to belong together: None when there is none), causes of failed
    attempts, tokens of failed attempts, and the retries-vs-queue-depth Spearman; `summary` is
    queries.retry_summary's row (None: unknown)."""
    s = summary or {}
    runs = s.get("runs") or 0
    wasted = (s["wasted_input_tokens"] + s["wasted_output_tokens"]) if summary else None
    return Retries(
        t_retry=t_retry, runs=runs, attempts=s.get("attempts", 0),
        rate=stats.ratio(s.get("extra_attempts"), s.get("known_runs")),
        runs_with_retries_share=stats.ratio(s.get("runs_with_retries"), s.get("known_runs")),
        failed_attempts=s.get("failed_attempts", 0), causes=s.get("causes", {}),
        wasted_input_tokens=s.get("wasted_input_tokens"), wasted_output_tokens=s.get("wasted_output_tokens"),
        wasted_tokens=wasted, spearman_retries_queue_depth=spearman_queue,
    )
