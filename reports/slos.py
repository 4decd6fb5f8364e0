"""The weekly review's SLO section: each SLO of the project at the week's end, over its rolling window ending then
(analysis/panels/slos.py: the numbers of the SLOs page and GET /api/v1/slos). A 7-day SLO's window is the week
itself."""
from datetime import datetime, timedelta

from analysis.panels import slos as numbers
from analysis.scope import Scope


def at_end(project, end: datetime) -> list[dict]:
    """[{"id", "description", "service", "objective", "window_days", "requests": {"good", "bad", "not_measured"},
    "compliance", "budget_remaining", "not_measured", "met"}] per SLO, by service. compliance and budget_remaining
    are None without a measured request, and so is met (kept: compliance >= objective)."""
    out = []
    slos = project.slos.order_by("service", "route", "tenant", "signal", "pk")
    for row in numbers.build(Scope(project.pk, "", end - timedelta(days=7), end), slos).rows:
        slo, status = row.slo, row.status
        counts, compliance = status.counts, status.compliance
        out.append({"id": slo.pk, "description": slo.description, "service": slo.service, "objective": slo.objective,
                    "window_days": slo.window_days,
                    "requests": {"good": counts.good, "bad": counts.bad, "not_measured": counts.unmeasured},
                    "compliance": compliance, "budget_remaining": status.budget_remaining,
                    "not_measured": row.not_measured,
                    "met": None if compliance is None else compliance >= slo.objective})
    return out
