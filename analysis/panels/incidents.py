"""The Incidents pages' numbers: the project's incidents in a window (open first, then newest) with what of the
window is not judged yet, and one incident's own numbers: its series against its baseline, the metrics that grew
and its slowest runs. Built from stored incidents (analysis/incidents/) and the analysis reads."""
from dataclasses import dataclass
from datetime import datetime, timedelta

from analysis.buckets import PARTS
from analysis.incidents import headlines, queue, reads
from analysis.models import Incident
from analysis.reads import queries
from analysis.reads import runs as runs_
from analysis.scope import Scope

SLOWEST = 10  # runs linked from an incident page
MAX_SERIES = 4  # grown metrics charted per incident
PAD = timedelta(minutes=30)  # context shown around an incident, at least


@dataclass(frozen=True)
class Incidents:
    """incidents: the scope's (every service's for service "") incidents with an onset in its window, at most
    reads.LIST_LIMIT, open first then newest; open_count: how many of them are open; unjudged: what of the window
    is not judged yet (unjudged()), None when every minute with traffic is."""
    incidents: list[Incident]
    open_count: int
    unjudged: dict | None


@dataclass(frozen=True)
class IncidentNumbers:
    """window: the page's time axis (window_of); scope: the incident's service and route, and its tenant when it
    was found on one tenant's series; points: queries.incident_series over the window (of its instance when found
    on one); grown: the metrics that grew, at most MAX_SERIES; measured: whether any point has attempts; slowest:
    the slowest runs inside the incident by its first grown bucket (else by total)."""
    window: tuple[datetime, datetime]
    scope: Scope
    points: list[dict]
    grown: list[str]
    measured: bool
    slowest: list[dict]


def build(scope: Scope) -> Incidents:
    rows = reads.project_list(scope.project_id, scope.start, scope.end, service=scope.service)
    return Incidents(incidents=rows, open_count=sum(i.end is None for i in rows), unjudged=unjudged(scope))


def unjudged(scope: Scope) -> dict | None:
    """What of the window is not judged yet: {"services": count, "since": the first such minute, "names": up to 5},
    None when every minute with traffic is judged (then no incident means none)."""
    found = queue.unjudged_services(scope.project_id, scope.start, scope.end)
    if scope.service:
        found = {scope.service: found[scope.service]} if scope.service in found else {}
    if not found:
        return None
    return {"services": len(found), "since": min(found.values()), "names": sorted(found)[:5]}


def window_of(incident, now: datetime) -> tuple[datetime, datetime]:
    """The incident page's time axis: the incident with at least PAD (or half its length) on either side."""
    end = incident.end or now
    pad = max(PAD, (end - incident.start) / 2)
    return incident.start - pad, end + pad if incident.end else now


def of(incident, now: datetime) -> IncidentNumbers:
    start, end = window_of(incident, now)
    # an incident found on a tenant's or an instance's own series is drawn on it, against its baseline
    found_on = (incident.detail or {}).get("slice") or {}
    tenant = found_on["value"] if found_on.get("dimension") == "tenant" else ""
    instance = found_on["value"] if found_on.get("dimension") == "instance" else ""
    scope = Scope(incident.project_id, incident.service, start, end, route=incident.route, tenant=tenant)
    points = queries.incident_series(scope, instance=instance)
    grown = headlines.grown(incident)[:MAX_SERIES]
    return IncidentNumbers(window=(start, end), scope=scope, points=points, grown=grown,
                           measured=any(p["attempts"] for p in points), slowest=slowest_runs(incident, now))


def slowest_runs(incident, now: datetime) -> list[dict]:
    """The slowest runs inside the incident, by its grown bucket when one grew (else by total)."""
    grown = [m for m in headlines.grown(incident) if m in PARTS]
    return runs_.search(incident.project_id, incident.start, incident.end or now, service=incident.service,
                        route=incident.route, sort=grown[0] if grown else "total", limit=SLOWEST)
