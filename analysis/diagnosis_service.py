"""One entry point for the API and the diagnose command: window checks, evidence, diagnosis."""
from datetime import datetime, timedelta, timezone

from django.conf import settings

from analysis.diagnosis import diagnose
from analysis.errors import AnalysisError
from analysis.evidence import collect
from analysis.models import ServiceCost
from analysis.thresholds import configured

DEFAULT_MAX_WINDOW_DAYS = 31


def parse_instant(value: str | None, name: str) -> datetime:
    """An ISO 8601 instant (Z or an offset; naive means UTC) as an aware UTC datetime, or AnalysisError."""
    if not value:
        raise AnalysisError("missing_parameter", f"'{name}' is required (an ISO 8601 instant)")
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise AnalysisError("bad_date", f"'{name}' is not an ISO 8601 instant: {value!r}") from None


def check_window(start: datetime, end: datetime) -> None:
    """Refuse an empty or reversed window and one longer than ANALYSIS_MAX_WINDOW_DAYS (default 31)."""
    if end <= start:
        raise AnalysisError("bad_date", "'end' must be after 'start'")
    days = getattr(settings, "ANALYSIS_MAX_WINDOW_DAYS", DEFAULT_MAX_WINDOW_DAYS)
    if end - start > timedelta(days=days):
        raise AnalysisError("window_too_large", f"the window may span at most {days} days")


def run_diagnosis(project_id: int, service: str, start: datetime, end: datetime, route: str = "",
                  tenant: str = "") -> dict:
    """{"verdict", "findings", "path", "recommendations", "evidence"} for one service window.

    Raises AnalysisError: missing_parameter without a service, bad_date / window_too_large for the window,
    unknown_service (404) when the service has no requests in it (for this project, route and tenant).
    """
    if not service:
        raise AnalysisError("missing_parameter", "'service' is required")
    check_window(start, end)
    evidence = collect(project_id, service, start, end, route=route, tenant=tenant)
    if not evidence.get("requests"):
        raise AnalysisError("unknown_service", f"no requests of service {service!r} in this window", status=404)
    evidence["cost_per_success_usd"] = cost_per_success(project_id, service, evidence.get("successful_runs_per_hour"))
    return {**diagnose(evidence, configured()), "evidence": evidence}


def cost_per_success(project_id: int, service: str, successes_per_hour: float | None) -> float | None:
    """cost_per_success = C_hour / R_success (seed 002), in USD; None without a configured C_hour or successes."""
    cost = ServiceCost.objects.filter(project_id=project_id, service=service).first()
    if cost is None or not successes_per_hour:
        return None
    return float(cost.cost_per_hour_usd) / successes_per_hour
