"""The diagnostic flowchart (seed 000, extended with seed 002's signatures) evaluated on collected evidence.

Pure: an Evidence in (see analysis.diagnosis.evidence.collect), verdict, findings, path and fixes out. The flowchart
is data, FLOWCHART below: each node asks one question of one measured value against one threshold and names
the node (or verdict: a code of analysis.diagnosis.verdicts.REGISTRY, whose record holds all else keyed by it) its yes
and no answers lead to. Nodes read the evidence through attributes, so a misspelt name raises AttributeError; a value
the data could not give is None, answers "unknown" and follows the "no" branch, so missing telemetry never produces a
verdict on its own. A node may name a measured upper bound of its value (t_queue <= TTFT <= total per attempt): when the
value is unknown and the bound is under the threshold, the answer is "no" all the same.

"healthy" needs positive evidence (healthy_supported): is TTFT high? and is decode slow? answered "no", or the
whole request's p95 under the TTFT threshold. When the walk reaches "healthy" without it, the verdict is
"insufficient_data" and "missing" says what to send; a verdict reached through a "yes" stays.
"""
from dataclasses import dataclass
from typing import Callable

from analysis.diagnosis.evidence import arrival_shares
from analysis.diagnosis.recommendations import data_fixes, recommend
from analysis.diagnosis.thresholds import DEFAULT, Thresholds
from analysis.diagnosis.verdicts import REGISTRY
from analysis.evidence_types import Buckets, Evidence, NoisyNeighbour, Segment, TenantTail, is_others
from analysis.wording import fmt

# The nodes answered by the serving engine's own metrics (analysis.reads.engine_series): the Diagnosis page links them
# to the Engine page; without engine metrics they answer "unknown" and the walk goes on.
ENGINE_NODES = ("kv_cache", "preemptions", "gpu_memory", "restarts", "gpu_busy", "queue_empty", "prefix_cache_miss",
                "engine_restarts", "memory_headroom")
INSUFFICIENT = "insufficient_data"  # what "healthy" becomes when the data cannot show that latency is fine
Value = Callable[[Evidence, Thresholds], float | None]


def metric(read: Callable[[Evidence], float | None]) -> Value:
    """A node's value that needs no threshold: `read` takes the evidence."""
    return lambda evidence, thresholds: read(evidence)


def shortest_ttft_p50(segments: dict[str, Segment], thresholds: Thresholds) -> float | None:
    """TTFT p50 of the shortest prompt segment with enough requests (None without prompt lengths)."""
    usable = [seg.ttft_p50 for name, seg in segments.items()
              if name != "unknown" and (seg.count or 0) >= thresholds.prefill_min_count and seg.ttft_p50 is not None]
    return usable[0] if usable else None


def network_share(evidence: Evidence) -> float | None:
    """The network's share of first-token time: from `network` stage spans, else from the layers (the gap between
    the gateway call's TTFT and the engine's, over the call's TTFT, at p95) when the engine was traced too."""
    stage = evidence.stages.network_share_of_first_token
    return stage if stage is not None else evidence.layers.network_share_of_ttft


def failed_share(evidence: Evidence) -> float | None:
    """Failed attempts over attempts (None without attempts)."""
    r = evidence.retries
    return r.failed_attempts / r.attempts if r.attempts else None


def prefix_miss_rate(evidence: Evidence) -> float | None:
    rate = evidence.engine.prefix_cache_hit_rate
    return None if rate is None else 1.0 - rate


def prefill_ratio(segments: dict[str, Segment], thresholds: Thresholds) -> float | None:
    """TTFT p50 of the longest prompt segment over the shortest, among segments with enough requests.

    Segments come in ascending prompt length (their edges are ANALYSIS_SEGMENT_EDGES); "unknown" is skipped.
    """
    usable = [seg.ttft_p50 for name, seg in segments.items()
              if name != "unknown" and (seg.count or 0) >= thresholds.prefill_min_count and seg.ttft_p50 is not None]
    if len(usable) < 2 or usable[0] <= 0:
        return None
    return usable[-1] / usable[0]


@dataclass(frozen=True)
class Node:
    name: str
    question: str
    value: Value
    threshold: str  # a Thresholds field; the answer is yes when value >= threshold
    yes: str  # a node name or a verdict code
    no: str
    unit: str = ""  # how the value and threshold read (analysis.wording.fmt): "ms", "%", "x", "corr", ...
    bound: Value | None = None  # a measured upper bound of the value: answers "no" when the value is unknown
    bound_name: str = ""  # what the bound is, for the path step


FLOWCHART = [
    Node("queue_p95", "Is queue wait high (t_queue p95, ms)?", metric(lambda e: e.buckets.t_queue.p95),
         "queue_p95_ms", yes="idle_slots", no="queue_share", unit="ms",
         bound=metric(lambda e: e.buckets.total.p95), bound_name="total p95"),
    Node("queue_share", "Does queue wait dominate request time (t_queue share at p95)?",
         metric(lambda e: e.dominance.t_queue.p95_share), "queue_share", yes="idle_slots", no="prep_share", unit="%"),
    Node("idle_slots", "Under backlog, do slots sit idle (gap_fraction: queue > 0 while in_flight < cap)?",
         metric(lambda e: e.gap_fraction.service), "gap_fraction", yes="admission_gap", no="retry_rate_backlog", unit="%"),
    Node("retry_rate_backlog", "Are retries adding load (extra attempts per run)?",
         metric(lambda e: e.retries.rate), "retry_rate", yes="retry_queue_spearman", no="queue_backlog", unit="per run"),
    Node("retry_queue_spearman", "Do retries rise with queue depth (Spearman)?",
         metric(lambda e: e.retries.spearman_retries_queue_depth), "retry_queue_spearman",
         yes="retry_amplification", no="queue_backlog", unit="corr"),
    Node("prep_share", "Is preprocessing / tokenization slow (tokenize + prompt_build + policy share of t_first_token)?",
         metric(lambda e: e.stages.prep_share_of_first_token), "prep_share", yes="preprocessing", no="post_share", unit="%"),
    # Seed 002's dominance triage: post-processing that takes a large share of every request is a
    # throughput limiter of its own, whatever TTFT does, so it is asked before the TTFT branch.
    Node("post_share", "Does post-processing take a large share of request time (t_post share at p50)?",
         metric(lambda e: e.dominance.t_post.p50_share), "post_share", yes="post_processing", no="gateway_share",
         unit="%"),
    # Across layers (analysis/reads/layers.py): a gateway traced together with the engine it calls knows its own time,
    # outside its calls (auth, quota checks, routing, buffering): seed 000's Bottleneck 5 measured hop by hop.
    Node("gateway_share", "Does time inside the gateway take a large share of its requests (t_gateway share at "
         "p50)?", metric(lambda e: e.layers.gateway_share), "gateway_share", yes="gateway_overhead", no="ttft_p95",
         unit="%"),
    Node("ttft_p95", "Is TTFT high (p95, ms)?", metric(lambda e: e.buckets.ttft.p95), "ttft_p95_ms",
         yes="ttft_decode", no="decode_speed", unit="ms",
         bound=metric(lambda e: e.buckets.total.p95), bound_name="total p95"),
    Node("ttft_decode", "Is decode slow as well (ms per output token, p50)?",
         metric(lambda e: e.decode.ms_per_output_token_p50), "decode_ms_per_token", yes="decode_throughput",
         no="new_connections", unit="ms/token"),
    Node("new_connections", "Are connections churning (new connections per success)?",
         metric(lambda e: e.churn.new_connections_per_success), "new_connections_per_success",
         yes="churn_spearman", no="network_share", unit="per success"),
    Node("churn_spearman", "Does TTFT p95 rise with churn per window (Spearman)?",
         metric(lambda e: e.churn.spearman_ttft_p95), "churn_spearman", yes="connection_churn", no="network_share", unit="corr"),
    Node("network_share", "Is the network a large share of first-token time (network stage spans, or the gap "
         "between the gateway's and the engine's TTFT)?", metric(network_share), "network_share",
         yes="network_overhead", no="after_start", unit="%"),
    # Seed 000's leaf for high TTFT with decode normal: "check KV cache, GPU memory, cold starts"; seed 004: "high
    # utilization with empty queues suggests batching misconfiguration". Each needs positive evidence; a node the
    # data cannot answer (no engine metrics) answers unknown and the walk goes on, down to ttft_unexplained.
    Node("after_start", "Are TTFT outliers concentrated after an instance started (share of TTFT > p95 in its first "
         "minutes)?", metric(lambda e: e.cold_start_share), "cold_start_share", yes="cold_start", no="kv_cache",
         unit="%"),
    Node("kv_cache", "Is the KV cache near full (usage p95)?", metric(lambda e: e.engine.kv_cache_usage_p95),
         "kv_cache_usage", yes="preemptions", no="gpu_memory", unit="%"),
    Node("preemptions", "Are requests being preempted (preemptions per minute)?",
         metric(lambda e: e.engine.preemptions_per_min), "preemptions_per_min", yes="kv_cache_pressure",
         no="gpu_memory", unit="per min"),
    Node("gpu_memory", "Is GPU memory headroom gone (max used share)?",
         metric(lambda e: e.engine.gpu_memory_used_share_max), "gpu_memory_used_share", yes="gpu_memory_pressure",
         no="restarts", unit="%"),
    Node("restarts", "Did the engine restart (OOM kills, container restarts)?", metric(lambda e: e.engine.restarts),
         "restarts", yes="gpu_memory_pressure", no="gpu_busy", unit="count"),
    Node("gpu_busy", "Is the GPU busy (mean utilisation)?", metric(lambda e: e.engine.gpu_utilization_mean),
         "gpu_utilization", yes="queue_empty", no="prefill_ratio", unit="%"),
    Node("queue_empty", "Is the engine's queue empty while the GPU is busy (share of minutes)?",
         metric(lambda e: e.engine.queue_empty_share), "queue_empty_share", yes="short_prompts_slow",
         no="prefill_ratio", unit="%"),
    Node("short_prompts_slow", "Are short requests slow too (TTFT p50 of the shortest prompts)?",
         lambda e, t: shortest_ttft_p50(e.segments, t), "short_prompt_ttft_p50_ms", yes="batching_delay",
         no="prefill_ratio", unit="ms"),
    Node("prefill_ratio", "Does TTFT grow with prompt length (TTFT p50, longest vs shortest prompts)?",
         lambda e, t: prefill_ratio(e.segments, t), "prefill_ratio", yes="prefill_pressure", no="prefix_cache_miss",
         unit="x"),
    Node("prefix_cache_miss", "Does the prefix cache miss (1 - hit rate)?", metric(prefix_miss_rate),
         "prefix_cache_miss_rate", yes="prefill_pressure", no="ttft_unexplained", unit="%"),
    Node("decode_speed", "Is decode slow (ms per output token, p50)?",
         metric(lambda e: e.decode.ms_per_output_token_p50), "decode_ms_per_token", yes="decode_throughput",
         no="retry_rate", unit="ms/token"),
    Node("retry_rate", "Are retries high without a backlog (extra attempts per run)?",
         metric(lambda e: e.retries.rate), "retry_rate", yes="retry_amplification", no="engine_restarts",
         unit="per run"),
    # The stability branch: latency can look fine while engines are OOM-killed and the requests in flight fail and
    # are retried. Killed engines, or failing attempts with no GPU memory headroom, are never "healthy".
    Node("engine_restarts", "Were engines killed or restarted (OOM kills, crash loops, container restarts)?",
         metric(lambda e: e.engine.restarts), "restarts", yes="gpu_memory_pressure", no="memory_headroom",
         unit="count"),
    Node("memory_headroom", "Is GPU memory headroom gone (max used share)?",
         metric(lambda e: e.engine.gpu_memory_used_share_max), "gpu_memory_used_share", yes="failing_attempts",
         no="healthy", unit="%"),
    Node("failing_attempts", "Do attempts fail (failed attempts per attempt)?", metric(failed_share),
         "failed_attempt_share", yes="gpu_memory_pressure", no="healthy", unit="%"),
]
NODES = {node.name: node for node in FLOWCHART}

def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return round(float(value), 4)


# What each node measures, as its sentence names it ("t_queue p95 25.7 s is above 1 s → yes").
LABELS = {
    "queue_p95": "t_queue p95", "queue_share": "t_queue share at p95", "idle_slots": "gap_fraction",
    "retry_rate_backlog": "extra attempts", "retry_queue_spearman": "Spearman(retries, queue depth)",
    "prep_share": "preprocessing share of t_first_token", "post_share": "t_post share at p50",
    "ttft_p95": "TTFT p95", "ttft_decode": "decode", "new_connections": "new connections",
    "churn_spearman": "Spearman(churn, TTFT p95)", "network_share": "network share of t_first_token",
    "prefill_ratio": "TTFT p50 of the longest prompts vs the shortest", "decode_speed": "decode",
    "retry_rate": "extra attempts", "after_start": "share of TTFT outliers after an instance start",
    "kv_cache": "KV cache usage p95", "preemptions": "preemptions", "gpu_memory": "GPU memory used",
    "restarts": "restarts", "gpu_busy": "GPU utilisation", "queue_empty": "minutes with an empty engine queue",
    "short_prompts_slow": "TTFT p50 of the shortest prompts", "prefix_cache_miss": "prefix cache miss rate",
    "engine_restarts": "restarts", "memory_headroom": "GPU memory used", "failing_attempts": "failed attempts",
    "gateway_share": "t_gateway share at p50",
}


def comparison(step: dict, unit: str) -> str:
    """A step's value against its threshold as users read it: "gap_fraction 0% is below 50%"; "TTFT p95 not
    measured" (with its bound when that answered: "…; total p95 300 ms is below 600 ms")."""
    label, value, threshold = LABELS.get(step["node"], step["node"]), step["value"], step["threshold"]
    if value is None:
        bound = step.get("bound")
        return f"{label} not measured" + (
            f"; {step['bound_name']} {fmt(bound, unit)} is below {fmt(threshold, unit)}" if bound is not None else "")
    shown, limit = fmt(value, unit), fmt(threshold, unit)
    relation = "above" if value > threshold else "below" if value < threshold else "at"
    if shown == limit and value != threshold:
        relation = f"just {relation}"  # rounding shows both alike: "50% is just below 50%" is not a contradiction
    return f"{label} {shown} is {relation} {limit}"


def evaluate(node: Node, evidence: Evidence, thresholds: Thresholds) -> dict:
    """One path step: {"node", "question", "value", "threshold", "answer", "text"} with answer yes, no or unknown
    and text the sentence users read (comparison() → answer); an unknown value whose measured bound is under the
    threshold answers no, and the step gains "bound" (its value) and "bound_name"."""
    value = _number(node.value(evidence, thresholds))
    threshold = getattr(thresholds, node.threshold)
    answer = "unknown" if value is None else ("yes" if value >= threshold else "no")
    step = {"node": node.name, "question": node.question, "value": value, "threshold": threshold, "answer": answer}
    bound = _number(node.bound(evidence, thresholds)) if value is None and node.bound else None
    if bound is not None and bound < threshold:
        step.update(answer="no", bound=bound, bound_name=node.bound_name)
    step["text"] = f"{comparison(step, node.unit)} → {step['answer']}"
    return step


def walk(evidence: Evidence, thresholds: Thresholds) -> tuple[str, list[dict]]:
    """Follow the flowchart from its first node to a verdict; returns (verdict, path)."""
    path, current = [], FLOWCHART[0].name
    while current not in REGISTRY:
        node = NODES[current]
        step = evaluate(node, evidence, thresholds)
        path.append(step)
        current = node.yes if step["answer"] == "yes" else node.no
    return current, path


def cause_findings(verdict: str, steps: dict[str, dict]) -> list[dict]:
    """Other causes whose checks are positive (a group of a record's `present`, every node answering yes), besides
    the verdict and what it implies."""
    findings, implied = [], REGISTRY[verdict].implies
    for code, record in REGISTRY.items():
        if code == verdict or code in implied:
            continue
        group = next((g for g in record.present if all(steps[n]["answer"] == "yes" for n in g)), None)
        if group is None:
            continue
        checks = [{k: steps[n][k] for k in ("node", "value", "threshold")} for n in group]
        detail = "; ".join(comparison(steps[n], NODES[n].unit) for n in group)
        findings.append({"kind": "cause", "code": code, "message": f"{code} also present: {detail}", "checks": checks})
    return findings


def tenant_findings(service: Buckets, tails: list[TenantTail], noisy: list[NoisyNeighbour],
                    thresholds: Thresholds) -> list[dict]:
    """Tenant outliers (against the service's `service` buckets), then noisy neighbours; the Tenants page
    calls this with the same shaped rows, so the page and the verdict agree."""
    return tenant_outliers(service, tails, thresholds) + noisy_neighbours(tails, noisy, thresholds)


def tenant_outliers(service: Buckets, tails: list[TenantTail], thresholds: Thresholds) -> list[dict]:
    """Tenants with enough requests whose TTFT or total p95 is tenant_outlier_ratio times the service's (never
    the OTHERS entry: it pools many tenants)."""
    findings = []
    for row in tails:
        if (row.count or 0) < thresholds.tenant_min_count or is_others(row):
            continue
        for bucket in ("ttft", "total"):
            mine, theirs = _number(getattr(row, f"{bucket}_p95")), _number(getattr(service, bucket).p95)
            if mine is None or not theirs or mine < thresholds.tenant_outlier_ratio * theirs:
                continue
            findings.append({
                "kind": "tenant", "code": "tenant_outlier", "tenant": row.tenant,
                "message": f"tenant {row.tenant}: {'TTFT' if bucket == 'ttft' else bucket} p95 {fmt(mine, 'ms')} is "
                           f"{fmt(mine / theirs, 'x')} the service's {fmt(theirs, 'ms')}",
                "value": round(mine / theirs, 2), "threshold": thresholds.tenant_outlier_ratio,
            })
            break  # one finding per tenant: TTFT first, since it is what users feel
    return findings


def noisy_neighbours(tails: list[TenantTail], noisy: list[NoisyNeighbour], thresholds: Thresholds) -> list[dict]:
    """Tenants holding at least noisy_in_flight_share of busy slots during backlog, beyond their share of arrivals
    (never the OTHERS entry: its many tenants together may hold most slots)."""
    arrivals = arrival_shares(tails)
    findings = []
    for row in noisy:
        share = _number(row.in_flight_share_during_backlog)
        arrival_share = arrivals.get(row.tenant, 0.0) if arrivals else None
        if share is None or share < thresholds.noisy_in_flight_share or is_others(row):
            continue
        if arrival_share is not None and arrival_share >= share:
            continue  # holding slots in proportion to its own traffic is not noisy
        others = _number(row.others_t_queue_p95)
        findings.append({
            "kind": "tenant", "code": "noisy_neighbour", "tenant": row.tenant,
            "message": f"tenant {row.tenant} held {fmt(share, '%')} of busy slots during backlog"
                       + (f" with {fmt(arrival_share, '%')} of arrivals" if arrival_share is not None else "")
                       + (f"; other tenants' t_queue p95 {fmt(others, 'ms')}" if others is not None else ""),
            "value": share, "threshold": thresholds.noisy_in_flight_share,
        })
    return findings


def reliability_findings(success_rate: float | None, thresholds: Thresholds) -> list[dict]:
    """A low_success_rate finding when success_rate is known and below min_success_rate."""
    rate = _number(success_rate)
    if rate is None or rate >= thresholds.min_success_rate:
        return []
    return [{"kind": "reliability", "code": "low_success_rate", "value": rate, "threshold": thresholds.min_success_rate,
             "message": f"only {rate:.1%} of runs succeeded: throughput that increases failures is a regression"}]


def hidden_retry_findings(evidence: Evidence, verdict: str, thresholds: Thresholds) -> list[dict]:
    """A possible cause, never a verdict: where retries inside one client span are not visible (retries.hidden_runs:
    client spans without HTTP children or run keys) and the verdict does not explain a tail of TTFT (of total when TTFT
    is not measured) of at least hidden_retry_tail_ratio x its p50, the client's own retries (a failed try and its
    back-off inside the span) may make that tail. Empty otherwise, and when hidden_runs is unknown."""
    hidden, runs = evidence.retries.hidden_runs, evidence.retries.runs
    if not hidden or REGISTRY[verdict].explains_tail:
        return []
    name, stats = ("TTFT", evidence.buckets.ttft) if evidence.buckets.ttft.count else ("total", evidence.buckets.total)
    p50, p95 = _number(stats.p50), _number(stats.p95)
    if not p50 or p95 is None or p95 / p50 < thresholds.hidden_retry_tail_ratio:
        return []
    ratio = round(p95 / p50, 2)
    return [{"kind": "possible_cause", "code": "hidden_retries", "value": ratio,
             "threshold": thresholds.hidden_retry_tail_ratio, "hidden_runs": hidden,
             "message": f"possibly hidden retries: {name} p95 {fmt(p95, 'ms')} is {round(ratio, 1)} times its p50 "
                        f"{fmt(p50, 'ms')}, and retries inside one client span are not visible for {hidden} of {runs} "
                        f"runs: a client's own retries (a failed try and its back-off) make such a tail"
                        + (", which slow decode does not" if verdict == "decode_throughput" and name == "TTFT" else "")
                        + ". To see them, instrument the HTTP client (opentelemetry-instrumentation-httpx, -requests or "
                          "-aiohttp-client): each try becomes a child span"}]


def healthy_supported(evidence: Evidence, steps: dict[str, dict], thresholds: Thresholds) -> bool:
    """Do measured values show latency is fine? TTFT and decode speed both answered "no" (TTFT also by its bound),
    or the whole request's p95 under the TTFT threshold (a fast non-streaming service: t_stream <= total)."""
    total = _number(evidence.buckets.total.p95)
    if total is not None and total < thresholds.ttft_p95_ms:
        return True
    return steps["ttft_p95"]["answer"] == "no" and steps["decode_speed"]["answer"] == "no"


def missing(evidence: Evidence, steps: dict[str, dict]) -> list[str]:
    """What to send so that the TTFT and decode questions can be answered (empty when they are)."""
    advice = []
    if steps["ttft_p95"]["answer"] == "unknown":
        advice.append("TTFT is not measured: send a `first_token` event, or set "
                      "`gen_ai.response.time_to_first_chunk` (client instrumentations give it only for calls they saw "
                      "stream; LiteLLM with `LITELLM_OTEL_V2=true`)")
    if steps["decode_speed"]["answer"] == "unknown":
        if not evidence.buckets.t_stream.count:
            advice.append("Stream time is not measured: send a `last_token` event (or end the span at the last "
                          "chunk) after the first token")
        else:
            advice.append("Decode speed is not measured: set `gen_ai.usage.output_tokens` on successful attempts")
    return advice


def because(path: list[dict]) -> str:
    """Why the verdict, for its recommendations: each yes on the path and the no right after it, which ruled out
    the other branch ("because t_queue p95 25.7 s is above 1 s and gap_fraction 0% is below 50%"); when nothing
    said yes, what was not measured."""
    deciding = [s for k, s in enumerate(path) if s["answer"] == "yes" or (k and path[k - 1]["answer"] == "yes")]
    if deciding:
        return "because " + " and ".join(comparison(s, NODES[s["node"]].unit) for s in deciding)
    unknown = list(dict.fromkeys(LABELS.get(s["node"], s["node"]) for s in path if s["answer"] == "unknown"))
    if not unknown:
        return ""
    names = unknown[0] if len(unknown) == 1 else ", ".join(unknown[:-1]) + " and " + unknown[-1]
    return f"because {names} {'is' if len(unknown) == 1 else 'are'} not measured"


def diagnose(evidence: Evidence, thresholds: Thresholds = DEFAULT) -> dict:
    """Verdict, findings, path, recommendations and missing for one service window.

    verdict: a code of the verdicts registry (analysis.diagnosis.verdicts). path: the flowchart steps taken, in order.
    findings: other causes present (every node is evaluated, not only those on the path), hidden retries as a possible
    cause (hidden_retry_findings), tenant outliers, noisy neighbours and a low success rate. recommendations: the seed
    fixes for the verdict (none for healthy), plus tenant isolation when a tenant stands out. A walk that ends at
    "healthy" without healthy_supported() gives "insufficient_data", with "missing": what to send (first in its
    recommendations); evidence whose measures are all unknown gives it too, and so does a window with fewer runs than
    thresholds.min_runs ("4 runs; a verdict needs 30" first in "missing"; the path and the findings stay, as
    observations). "sample": {"runs", "needed"}.
    """
    verdict, path = walk(evidence, thresholds)
    steps = {node.name: evaluate(node, evidence, thresholds) for node in FLOWCHART}
    gaps = []
    if verdict == "healthy" and not healthy_supported(evidence, steps, thresholds):
        verdict, gaps = INSUFFICIENT, missing(evidence, steps)
    runs = evidence.retries.runs
    # never confident on a handful: path and findings stay, as observations. (Hand-made evidence without requests
    # says nothing of its runs: a real window has requests, else it is unknown_service.)
    if evidence.requests and (runs or 0) < thresholds.min_runs:
        verdict, gaps = INSUFFICIENT, [sample_text(runs, thresholds.min_runs)] + gaps
    tenants = tenant_findings(evidence.buckets, evidence.tenants, evidence.noisy_neighbours, thresholds)
    findings = (cause_findings(verdict, steps) + hidden_retry_findings(evidence, verdict, thresholds) + tenants
                + reliability_findings(evidence.success_rate, thresholds))
    return {"verdict": verdict, "findings": findings, "path": path, "missing": gaps,
            "sample": {"runs": runs, "needed": thresholds.min_runs},
            "recommendations": data_fixes(gaps) + recommend(verdict, tenant_findings=tenants, why=because(path))}


def sample_text(runs: int, needed: int) -> str:
    """ "4 runs; a verdict needs 30": why a window with too few runs gets no verdict."""
    return f"{runs} run{'' if runs == 1 else 's'}; a verdict needs {needed}"
