"""One entry point for the API and the diagnose command: window checks, evidence, diagnosis."""
from dataclasses import replace
from datetime import datetime

from analysis.aggregates import shared_reads
from analysis.coverage import coverage
from analysis.diagnosis import diagnose
from analysis.errors import AnalysisError
from analysis.evidence import collect
from analysis.models import ServiceCost
from analysis.thresholds import configured
from analysis.windows import check_window
from store.concurrent import beside


def run_diagnosis(project_id: int, service: str, start: datetime, end: datetime, route: str = "",
                  tenant: str = "") -> dict:
    """{"verdict", "findings", "path", "missing", "recommendations", "evidence", "coverage"} for one service window,
    JSON-ready (evidence: Evidence.to_json(), with cost_per_success_usd; coverage: analysis.coverage.coverage()).

    Raises AnalysisError: missing_parameter without a service, bad_date / window_too_large for the window,
    unknown_service (404) when the service has no requests in it (for this project, route and tenant).
    """
    if not service:
        raise AnalysisError("missing_parameter", "'service' is required")
    check_window(start, end)
    # the coverage is read beside the evidence (its reads queue behind it) rather than after it, on an idle core;
    # the evidence's reads and the coverage's ask the window's core once
    with shared_reads(), beside(lambda: coverage(project_id, service, start, end, route=route, tenant=tenant)) as covering:
        evidence = collect(project_id, service, start, end, route=route, tenant=tenant)
        if not evidence.requests:
            raise AnalysisError("unknown_service", f"no requests of service {service!r} in this window", status=404)
        covered = covering.result()
    evidence = replace(evidence, cost_per_success_usd=cost_per_success(project_id, service,
                                                                       evidence.successful_runs_per_hour))
    return {**diagnose(evidence, configured()), "evidence": evidence.to_json(), "coverage": covered}


def cost_per_success(project_id: int, service: str, successes_per_hour: float | None) -> float | None:
    """cost_per_success = C_hour / R_success (seed 002), in USD; None without a configured C_hour or successes."""
    cost = ServiceCost.objects.filter(project_id=project_id, service=service).first()
    if cost is None or not successes_per_hour:
        return None
    return float(cost.cost_per_hour_usd) / successes_per_hour
