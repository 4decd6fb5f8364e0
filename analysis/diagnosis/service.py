"""One entry point for the API and the diagnose command: window checks, evidence, diagnosis."""
from dataclasses import replace

from analysis.diagnosis.evidence import collect
from analysis.diagnosis.flowchart import diagnose
from analysis.diagnosis.recommendations import recommend
from analysis.diagnosis.thresholds import configured
from analysis.diagnosis.verdicts import REGISTRY
from analysis.errors import AnalysisError
from analysis.models import ServiceCost
from analysis.reads import layers
from analysis.reads.coverage import coverage, hidden_retry_runs
from analysis.rollups.aggregates import shared_reads
from analysis.scope import Scope
from analysis.windows import check_window
from analysis.wording import fmt
from store.concurrent import beside
from store.reasons import Reason


def run_diagnosis(scope: Scope) -> dict:
    """{"verdict", "findings", "path", "missing", "recommendations", "evidence", "coverage"} for one service window,
    JSON-ready (evidence: Evidence.to_json(), with cost_per_success_usd; coverage: analysis.reads.coverage.coverage()).

    Raises AnalysisError: missing_parameter without a service, bad_date / window_too_large for the window,
    unknown_service (404) when the service has no requests in it (for this project, route and tenant).
    """
    if not scope.service:
        raise AnalysisError(Reason.MISSING_PARAMETER, "'service' is required")
    check_window(scope.start, scope.end)
    # the coverage is read beside the evidence (its reads queue behind it) rather than after it, on an idle core;
    # the evidence's reads and the coverage's ask the window's core once
    with shared_reads(), beside(lambda: coverage(scope)) as covering:
        evidence = collect(scope)
        if not evidence.requests:
            raise AnalysisError(Reason.UNKNOWN_SERVICE, f"no requests of service {scope.service!r} in this window")
        covered = covering.result()
    evidence = replace(evidence, cost_per_success_usd=cost_per_success(scope.project_id, scope.service,
                                                                       evidence.successful_runs_per_hour),
                       retries=replace(evidence.retries, hidden_runs=hidden_retry_runs(covered)))
    result = diagnose(evidence, configured())
    if evidence.layers.engines and REGISTRY[result["verdict"]].is_cause:
        result = with_engine_causes(result, engine_causes(scope, evidence.layers.engines), evidence.layers)
    return {**result, "layers": path_of(scope), "evidence": evidence.to_json(),
            "coverage": covered}


def path_of(scope: Scope) -> dict:
    """The services on the request path with the service's role: {"role": "gateway" | "engine" | "both" | "single",
    "calls": [engine services it called], "called_by": [gateway services that called it]} (docs/cross-layer.md)."""
    service = scope.service
    pairs = layers.edges(scope.project_id, scope.start, scope.end, service)
    calls = sorted({e.engine for e in pairs if e.gateway == service})
    called_by = sorted({e.gateway for e in pairs if e.engine == service})
    role = {(True, True): "both", (True, False): "gateway", (False, True): "engine"}.get(
        (bool(calls), bool(called_by)), "single")
    return {"role": role, "calls": calls, "called_by": called_by}


ENGINES_ASKED = 2  # a gateway's busiest engines whose own diagnosis is read


def engine_causes(scope: Scope, engines: list[dict]) -> list[dict]:
    """The own diagnosis of the busiest engines a gateway called, over the scope's window (every route and tenant:
    the engine's own): [{"service", "verdict",
    "evidence"}] for those with a cause ("engine llm-70b: t_queue p95 4.1 s"). Their own layers are not followed."""
    found = []
    for edge in engines[:ENGINES_ASKED]:
        evidence = collect(Scope(scope.project_id, edge["engine"], scope.start, scope.end))
        if evidence.requests:
            answer = diagnose(evidence, configured())
            if REGISTRY[answer["verdict"]].is_cause:  # healthy and insufficient_data ask nothing of them
                found.append({"service": edge["engine"], "verdict": answer["verdict"],
                              "evidence": deciding_step(answer["path"])})
    return found


def deciding_step(path: list[dict]) -> str:
    """What decided an engine's verdict, as its path says it: its last yes ("t_queue p95 4.1 s is above 1 s"; for a
    first-token leaf the leaf's own measure, "preemptions 12 per min is above 1 per min", not the "TTFT p95 is high"
    every such leaf passes through)."""
    step = next((s for s in reversed(path) if s["answer"] == "yes"), None)
    return step["text"].rsplit(" → ", 1)[0] if step else ""


def with_engine_causes(result: dict, causes: list[dict], layers) -> dict:
    """A gateway's diagnosis with its engines' causes: each a finding; and when nothing at the gateway explains its
    slow first token (ttft_unexplained), or only its calls' first tokens growing with prompt length do
    (prefill_pressure; the verdicts whose record is second_hand), the first engine's cause is the verdict, with that
    engine as evidence. When the engines have no cause, what the engine did not spend of the call's first token was
    spent between the layers: network_overhead once that is LAYER_NETWORK_SHARE of it or more (below network_share's
    bar, which must find the network on its own among every part of the first token)."""
    findings = [{"kind": "engine", "code": c["verdict"], "service": c["service"],
                 "message": f"engine {c['service']}: {c['verdict']} ({c['evidence']})"} for c in causes]
    result = {**result, "findings": result["findings"] + findings}
    if not REGISTRY[result["verdict"]].second_hand or (result["verdict"] != "ttft_unexplained" and not causes):
        return result
    if causes:
        top = causes[0]
        why = f"because engine {top['service']}: {top['evidence']}"
        result.update(verdict=top["verdict"], engine_cause=top, recommendations=recommend(top["verdict"], why=why))
    elif (layers.network_share_of_ttft or 0) >= LAYER_NETWORK_SHARE:
        why = (f"because the engines' own first tokens are fine and the time between the layers is "
               f"{fmt(layers.network_share_of_ttft, '%')} of the calls' TTFT p95 ({fmt(layers.t_network_ttft_p95, 'ms')})")
        result.update(verdict="network_overhead", recommendations=recommend("network_overhead", why=why))
    return result


LAYER_NETWORK_SHARE = 0.2


def cost_per_success(project_id: int, service: str, successes_per_hour: float | None) -> float | None:
    """cost_per_success = C_hour / R_success (seed 002), in USD; None without a configured C_hour or successes."""
    cost = ServiceCost.objects.filter(project_id=project_id, service=service).first()
    if cost is None or not successes_per_hour:
        return None
    return float(cost.cost_per_hour_usd) / successes_per_hour
