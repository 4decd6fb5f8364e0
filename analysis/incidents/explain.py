"""Why an incident happened and for whom: the flowchart on its window against its baseline, causes and scope.

explain() is what incident detection (analysis/incidents/detection.py) calls for each incident it finds. Reads go
through analysis.diagnosis.evidence.collect and analysis.reads.queries only; the rest is pure (compare.py, causes.py, scope.py).
"""
from datetime import datetime

from django.conf import settings

from analysis.diagnosis.evidence import collect
from analysis.diagnosis.flowchart import INSUFFICIENT, cause_findings, reliability_findings, tenant_findings
from analysis.diagnosis.recommendations import recommend
from analysis.diagnosis.thresholds import configured
from analysis.errors import AnalysisError
from analysis.incidents import causes as causes_
from analysis.incidents import compare
from analysis.incidents import scope as scope_
from analysis.reads import queries
from analysis.scope import Scope
from analysis.windows import check_window
from analysis.wording import fmt
from store.reasons import Reason

NARROWING = ("route", "tenant")  # the scope dimensions collect() can narrow the evidence to


def explain(project_id: int, service: str, start: datetime, end: datetime, baseline_start: datetime,
            baseline_end: datetime, route: str = "", slice_: dict | None = None) -> dict:
    """{"verdict", "causes", "scope", "path", "findings", "recommendations"} for the incident [start, end) of
    `service` (one route, or "" for all) against its baseline [baseline_start, baseline_end).

    verdict: a code of analysis.diagnosis.verdicts.REGISTRY; causes[0]'s code whenever latency grew (causes.py), else
    the compared flowchart's. causes: [{"code", "share"}], shares of the increase, largest first (a gateway with calls
    seen at two layers: with "layer" and "service", causes.layered). scope: [{"dimension", "value", "share"}], [] when
    service-wide; an incident found on a route's own series names its route first, one found on a tenant's or an
    instance's (`slice_`: {"dimension", "value"}) names that slice first. path: the compared flowchart's steps
    (compare.py), on the dominant tenant's or route's requests when the scope has one. An empty baseline leaves every
    comparison "not measured", the answers absolute, and causes and scope []. Raises AnalysisError: missing_parameter
    without a service, bad_date / window_too_large for either window, unknown_service (404) without requests in the
    incident.
    """
    if not service:
        raise AnalysisError(Reason.MISSING_PARAMETER, "'service' is required")
    check_window(start, end)
    check_window(baseline_start, baseline_end)
    thresholds = configured()
    windows = (project_id, service, start, end, baseline_start, baseline_end)
    incident = collect(Scope(project_id, service, start, end, route=route))
    if not incident.requests:
        raise AnalysisError(Reason.UNKNOWN_SERVICE, f"no requests of service {service!r} in this window")
    baseline = collect(Scope(project_id, service, baseline_start, baseline_end, route=route))
    steps = compare.compared_steps(incident, baseline, thresholds)
    sums = _sums(windows, {"route": route}, baseline.window)
    ranked = causes_.causes(*sums, steps)
    if baseline.layers.linked and not route:  # a gateway seen at two layers: its increase split across them
        ranked = _across_layers(windows, sums, steps, thresholds)
    where = _scope(windows, baseline, ranked[0]["code"] if ranked else compare.walk(steps)[0], route,
                   ranked[0].get("layer", "") if ranked else "")
    if slice_:  # the path and causes of a tenant's incident are that tenant's (an instance's cannot be narrowed to)
        where = _named_first(where, slice_["dimension"], slice_["value"])
    narrow = _narrowing(where, route)
    if narrow:
        incident = collect(Scope(project_id, service, start, end, **narrow))
        baseline = _own_baseline(windows, narrow, baseline, thresholds.tenant_min_count)
        steps = compare.compared_steps(incident, baseline, thresholds)
        ranked = causes_.causes(*_sums(windows, narrow, baseline.window), steps) or ranked
    flowchart, path = compare.walk(steps)
    verdict = ranked[0]["code"] if ranked else flowchart
    if (incident.retries.runs or 0) < thresholds.min_runs:  # never confident on a handful: causes stay as observations
        verdict = INSUFFICIENT
    return {"verdict": verdict, "causes": ranked, "scope": _named_first(where, "route", route) if route else where,
            "path": path,
            **_advice(verdict, flowchart, steps, incident, where[0] if narrow else None, thresholds,
                      why(verdict, ranked, path))}


def why(verdict: str, ranked: list[dict], path: list[dict]) -> str:
    """Why the incident's fixes: the verdict's share of the increase, then the path's yes answers against the
    baseline ("because queue_backlog explains 95% of the increase over the baseline; t_queue p95 33 s vs baseline
    40 ms: ×800")."""
    share = next((c["share"] for c in ranked if c["code"] == verdict), None)
    parts = [f"{verdict} explains {fmt(share, '%')} of the increase over the baseline"] if share else []
    parts += [s["comparison"] for s in path if s["answer"] == "yes"]
    return "because " + "; ".join(parts) if parts else ""


def _scope(windows, baseline, cause: str, route: str, layer: str = "") -> list[dict]:
    """scope.scope() on the excess of the bucket that locates `cause`; [] without a baseline to exceed. A cause
    across layers (causes.layered) is located on the call's total, which holds the network and the engine (the
    call's own buckets do not split them); the gateway's own time (t_gateway) is not located yet: []."""
    if (cause, layer) == ("gateway_overhead", "gateway"):
        return []
    bucket = "total" if layer in ("network", "engine") else scope_.measured(cause)
    mean_ms = getattr(baseline.buckets, bucket).mean
    material_ms = baseline.buckets.ttft.mean or baseline.buckets.total.mean
    if mean_ms is None or not material_ms:
        return []
    scope, before = Scope(*windows[:4], route=route), windows[4:]  # the incident's and its baseline's windows
    rows = queries.scope_excess(scope, *before, bucket, mean_ms, settings.ANALYSIS_SEGMENT_EDGES,
                                settings.ANALYSIS_TOP_N, scope_.MIN_ATTEMPTS)
    if baseline.layers.linked and not route:  # a gateway: the engines (and their instances) its calls went to
        rows += queries.scope_excess_layers(scope, *before, settings.ANALYSIS_TOP_N, scope_.MIN_ATTEMPTS)
    return scope_.scope(rows, material_ms, cause)


def _across_layers(windows, sums, steps, thresholds) -> list[dict]:
    """causes.layered() on the gateway's calls seen at two layers (queries.layer_stage_sums of both windows), an
    engine's queue cause from that engine's own steps over the same windows."""
    project_id, service, start, end, baseline_start, baseline_end = windows
    links = (queries.layer_stage_sums(Scope(project_id, service, start, end)),
             queries.layer_stage_sums(Scope(project_id, service, baseline_start, baseline_end)))

    def engine_steps(engine: str) -> dict:
        return compare.compared_steps(collect(Scope(project_id, engine, start, end)),
                                      collect(Scope(project_id, engine, baseline_start, baseline_end)), thresholds)
    return causes_.layered(*sums, steps, links, service, engine_steps) if links[0] else causes_.causes(*sums, steps)


def _named_first(where: list[dict], dimension: str, value: str) -> list[dict]:
    """An incident found on one slice's own series (jobs.detect_service) is that slice's: it comes first, with the
    share of the excess the scope found for it, or all of it (share 1: within a route's own requests every
    excess is the route's), before the values that carry the excess beside it."""
    named = [w for w in where if (w["dimension"], w["value"]) == (dimension, value)]
    share = named[0]["share"] if named else 1.0
    return [{"dimension": dimension, "value": value, "share": share},
            *(w for w in where if (w["dimension"], w["value"]) != (dimension, value))]


def _narrowing(where: list[dict], route: str) -> dict:
    """collect()'s route / tenant arguments for the dominant scope value, {} when there is none to narrow to."""
    if not where or where[0]["dimension"] not in NARROWING:
        return {}
    return {"route": route, "tenant": ""} | {where[0]["dimension"]: where[0]["value"]}


def _own_baseline(windows, narrow, service_wide, min_count):
    """The scope value's own baseline evidence when it had min_count attempts there, else the service's."""
    project_id, service, _, _, baseline_start, baseline_end = windows
    own = collect(Scope(project_id, service, baseline_start, baseline_end, **narrow))
    return own if own.requests >= min_count else service_wide


def _sums(windows, narrow, baseline_window) -> tuple[dict, dict]:
    """queries.stage_sums of the incident and of the baseline the steps were compared with (the scope value's own,
    or the service's when narrowed evidence fell back to it)."""
    project_id, service, start, end, baseline_start, baseline_end = windows
    own_baseline = {"route": baseline_window.route, "tenant": baseline_window.tenant}
    return (queries.stage_sums(Scope(project_id, service, start, end, **narrow)),
            queries.stage_sums(Scope(project_id, service, baseline_start, baseline_end, **own_baseline)))


def _advice(verdict, flowchart, steps, incident, scoped, thresholds, because: str) -> dict:
    """diagnose()'s findings and recommendations for the verdict, on the compared steps; plus a finding when the
    flowchart ended elsewhere or ran on one scope value's requests."""
    tenants = tenant_findings(incident.buckets, incident.tenants, incident.noisy_neighbours, thresholds)
    findings = cause_findings(verdict, steps) + tenants + reliability_findings(incident.success_rate, thresholds)
    if flowchart != verdict:
        findings.append({"kind": "verdict", "code": flowchart,
                         "message": f"the flowchart against the baseline ends at {flowchart}; {verdict} explains "
                                    "the largest share of the increase"})
    if scoped:
        name, value = scoped["dimension"], scoped["value"]
        findings.append({"kind": "scope", "code": "scoped_evidence", "dimension": name, "value": value,
                         "message": f"the flowchart ran on the requests of {name} {value}, where the excess is"})
    return {"findings": findings, "recommendations": recommend(verdict, tenant_findings=tenants, why=because)}
