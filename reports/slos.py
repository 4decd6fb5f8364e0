"""The weekly review's SLO section: each SLO of the project at the week's end, over its rolling window ending then
(analysis.reads.slos.status: the numbers of the SLOs page and GET /api/v1/slos). A 7-day SLO's window is the week itself."""
from datetime import datetime

from analysis.reads import slos as slo_status


def at_end(project, end: datetime) -> list[dict]:
    """[{"id", "description", "service", "objective", "window_days", "requests": {"good", "bad", "not_measured"},
    "compliance", "budget_remaining", "not_measured", "met"}] per SLO, by service. compliance and budget_remaining
    are None without a measured request, and so is met (kept: compliance >= objective)."""
    out = []
    for slo in project.slos.order_by("service", "route", "tenant", "signal", "pk"):
        status = slo_status.status(slo, end)
        counts, compliance = status.counts, status.compliance
        out.append({"id": slo.pk, "description": slo.description, "service": slo.service, "objective": slo.objective,
                    "window_days": slo.window_days,
                    "requests": {"good": counts.good, "bad": counts.bad, "not_measured": counts.unmeasured},
                    "compliance": compliance, "budget_remaining": status.budget_remaining,
                    "not_measured": slo_status.not_measured_text(status),
                    "met": None if compliance is None else compliance >= slo.objective})
    return out
