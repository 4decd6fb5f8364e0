"""The Overview's one story per service: what happened in the range and what holds now, in one order.

A service's status is the first of: an incident open now, an incident in the range, a budget violated now (its latest
evaluated window), its current verdict (the latest stored diagnosis), so the page never calls a service healthy beside
its incident or its violated budget. Reads the Django DB only (incidents, violations, diagnoses).
"""
from dataclasses import dataclass
from datetime import datetime

from analysis.incidents import headlines, reads
from analysis.wording import fmt
from budgets.evaluation import violated_now
from budgets.models import BudgetViolation
from dashboard import incident_charts
from dashboard.verdicts import latest_per_service

OPEN, IN_RANGE, BUDGET, VERDICT = "incident open", "incident in range", "budget violated", "verdict"


@dataclass
class Status:
    """One row of #service-status: the service, which of the four it is (`kind`), the verdict word, a link target
    (an incident id, a diagnosis id), what it says ("since 13:12", "total p95 8.69 s of 2.5 s") and the coverage
    of its latest diagnosis (runs diagnosed and the window)."""
    service: str
    kind: str
    verdict: str
    incident: object = None
    diagnosis: object = None
    detail: str = ""


def violation_text(v: BudgetViolation) -> str:
    """"total p95 8.69 s of 2.5 s" (stage, percentile, measured vs limit)."""
    return f"{v.stage} p{v.percentile} {fmt(v.measured_ms, 'ms')} of {fmt(v.target_ms, 'ms')}"


def incident_line(incident, now: datetime) -> dict:
    """One entry of #incidents-in-range: the incident, its verdict, top cause with its share, duration."""
    return {"incident": incident, "cause": headlines.top_cause(incident) or "none named",
            "duration": headlines.duration_text(incident, now)}


def overview(project, services: list[dict], start: datetime, end: datetime, now: datetime) -> dict:
    """{"rows": [Status] (services with an open incident first, then in range, then a violated budget, then the
    rest, busiest first within each), "incidents": [incident_line] of every service in the range (open first, then
    newest), "violations": [(violation, text)], "strip": (id, spec) or None}."""
    found = reads.project_list(project.pk, start, end)
    violations = violated_now(project)
    names = list(dict.fromkeys([s["value"] for s in services] + [i.service for i in found]
                               + [v.budget.service for v in violations]))
    stored = latest_per_service(project, names)
    rows = [_status(name, found, violations, stored.get(name)) for name in names]
    order = (OPEN, IN_RANGE, BUDGET, VERDICT)
    rows.sort(key=lambda r: order.index(r.kind))
    return {"rows": rows, "incidents": [incident_line(i, now) for i in found],
            "violations": [(v, violation_text(v)) for v in violations],
            "strip": ("incident-strip", incident_charts.strip(found, (start, end), now)) if found else None}


def _status(service: str, found: list, violations: list, diagnosis) -> Status:
    mine = [i for i in found if i.service == service]
    still_open = [i for i in mine if i.end is None]
    if still_open:
        i = min(still_open, key=lambda i: i.start)
        return Status(service, OPEN, i.verdict, incident=i, diagnosis=diagnosis, detail=f"since {i.start:%H:%M} UTC")
    if mine:
        i = max(mine, key=lambda i: i.start)
        more = f" (+{len(mine) - 1} more)" if len(mine) > 1 else ""
        return Status(service, IN_RANGE, i.verdict, incident=i, diagnosis=diagnosis,
                      detail=f"{i.start:%H:%M}–{i.end:%H:%M} UTC{more}")
    over = [v for v in violations if v.budget.service == service]
    if over:
        return Status(service, BUDGET, "budget_violated", diagnosis=diagnosis, detail=violation_text(over[0]))
    return Status(service, VERDICT, diagnosis.verdict if diagnosis else "not diagnosed yet", diagnosis=diagnosis)
