"""Stored incidents: reconciling a detection with what is stored, reading them back, and their API shape.

A detection over a stretch replaces what is stored for it: a stored incident of the same service and route
whose onset lies in the stretch keeps its id while a detected one starts within MATCH of it (its fields are
updated), stored ones no longer detected are deleted, new ones are created. The explanation (explain.py) runs
when an incident is created, when its onset or end moves, when a closed one's peak or baseline changed (late
spans), and at most every EXPLAIN_EVERY while it is open. A rerun on the same data changes nothing.
"""
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q

from analysis.errors import AnalysisError
from analysis.incidents.detection import Found
from analysis.incidents.explain import explain
from analysis.models import Incident
from analysis.thresholds import Thresholds
from analysis.windows import iso, parse_instant

MATCH = timedelta(minutes=2)  # an onset moving this little is the same incident
EXPLAIN_EVERY = timedelta(minutes=5)  # an open incident's explanation is refreshed at most this often
UNEXPLAINED = "unknown"  # the verdict when the explanation could not run (its reason is in detail)


def incidents_overlapping(project_id: int, service: str, start: datetime, end: datetime, route: str = "",
                          tenant: str = "") -> list[Incident]:
    """The project's stored incidents of `service` overlapping [start, end) (open ones reach to now), oldest first.

    route "" gives every incident of the service (service-wide and per-route detections); a route gives those
    detected on it or service-wide, except a service-wide one whose scope names only other routes. tenant ""
    gives all; a tenant leaves out the incidents whose scope names only other tenants (a service-wide incident,
    scope [], concerns every tenant)."""
    rows = Incident.objects.filter(project_id=project_id, service=service, start__lt=end).filter(
        Q(end__isnull=True) | Q(end__gt=start))
    if route:
        rows = rows.filter(route__in=("", route))
    found = [i for i in rows.order_by("start", "id") if _concerns(i, "route", route) and _concerns(i, "tenant", tenant)]
    return found


def _concerns(incident: Incident, dimension: str, value: str) -> bool:
    """Whether the incident concerns this route / tenant: no value asked, or its scope names none of that
    dimension, or names this one."""
    named = {s.get("value") for s in incident.scope or [] if s.get("dimension") == dimension}
    return not value or not named or value in named


def incident_json(incident: Incident, url: str) -> dict:
    """The API's shape of one incident: {"id", "start", "end" (None while ongoing), "verdict", "causes", "scope",
    "baseline": {"start", "end", "buckets", "ttft", "total"}, "peak": {"buckets", "ttft", "total"}, "path", "url"};
    instants ISO 8601 with a Z, durations ms; `url` is the incident page's absolute address."""
    return {"id": incident.id, "start": iso(incident.start), "end": iso(incident.end) if incident.end else None,
            "verdict": incident.verdict, "causes": incident.causes, "scope": incident.scope,
            "baseline": incident.baseline, "peak": incident.peak, "path": incident.path, "url": url}


def reconcile(project_id: int, service: str, route: str, start: datetime, end: datetime, found: list[Found],
              now: datetime, th: Thresholds) -> dict:
    """Make the stored incidents with an onset in [start, end) those of `found` (see the module docstring).
    `end` is where the detection stopped: an open incident is explained up to it. Returns {"created",
    "updated", "closed", "deleted", "unchanged"} counts."""
    counts = dict.fromkeys(("created", "updated", "closed", "deleted", "unchanged"), 0)
    with transaction.atomic():
        stored = list(Incident.objects.select_for_update().filter(
            project_id=project_id, service=service, route=route, start__gte=start, start__lt=end).order_by("start"))
        for item in found:
            row = _match(stored, item.start)
            if row is not None:
                stored.remove(row)
            counts[_store(row, item, project_id, service, route, end, now, th)] += 1
        for row in stored:
            row.delete()
            counts["deleted"] += 1
    return counts


def _match(stored: list[Incident], onset: datetime) -> Incident | None:
    near = [row for row in stored if abs(row.start - onset) <= MATCH]
    return min(near, key=lambda row: abs(row.start - onset)) if near else None


def _store(row: Incident | None, item: Found, project_id, service, route, until, now, th) -> str:
    """Create or update the row of one detected incident; returns which of the counts it was."""
    fields = {"start": item.start, "end": item.end, "baseline": item.baseline.summary(), "peak": item.peak()}
    departed = {"departed": item.departed(th), "baseline_source": item.baseline.source,
                "baseline_minutes": item.baseline.minutes, **({"slice": item.slice} if item.slice else {})}
    if row is None:
        row = Incident(project_id=project_id, service=service, route=route, detected_at=now, **fields)
        _explain(row, departed, until, now)
        row.save()
        return "created"
    moved = row.start != item.start or row.end != item.end
    data_changed = row.baseline != fields["baseline"] or row.peak != fields["peak"]
    stale = item.end is None and now - _explained_at(row) >= EXPLAIN_EVERY
    if not (moved or data_changed or stale):
        return "unchanged"
    closing = row.end is None and item.end is not None
    for name, value in fields.items():
        setattr(row, name, value)
    if moved or stale or item.end is not None:
        _explain(row, departed, until, now)
    else:  # an open incident's newest peak waits for its next explanation
        row.detail = {**row.detail, **departed}
    row.updated_at = now
    row.save()
    return "closed" if closing else "updated"


def _explain(row: Incident, departed: dict, until: datetime, now: datetime) -> None:
    """Fill verdict, causes, scope, path and detail from explain() over the incident (up to `until` while open)."""
    baseline = row.baseline
    try:
        found = explain(row.project_id, row.service, row.start, row.end or until,
                        parse_instant(baseline["start"], "start"), parse_instant(baseline["end"], "end"),
                        route=row.route, slice_=departed.get("slice"))
    except AnalysisError as exc:  # e.g. the incident's spans left retention: keep it, say why it is unexplained
        found = {"verdict": UNEXPLAINED, "causes": [], "scope": [], "path": [], "findings": [],
                 "recommendations": [], "error": f"{exc.reason}: {exc}"}
    row.verdict, row.causes, row.scope, row.path = found["verdict"], found["causes"], found["scope"], found["path"]
    row.detail = {**departed, "findings": found["findings"], "recommendations": found["recommendations"],
                  "explained_at": iso(now), **({"explain_error": found["error"]} if "error" in found else {})}


def _explained_at(row: Incident) -> datetime:
    at = (row.detail or {}).get("explained_at")
    return parse_instant(at, "explained_at") if at else row.updated_at
