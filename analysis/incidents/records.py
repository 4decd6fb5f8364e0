"""Stored incidents: reconciling a detection with what is stored, reading them back, and their API shape.

A detection over a stretch reconciles what is stored for it, and an incident keeps its id and URL for life
(people paste incident links into Slack and tickets): each stored incident of the same service and route whose
onset lies in the stretch goes to the detected one it overlaps most (or whose onset is within MATCH of its own).
A detected incident keeps the oldest id among those that went to it, with its onset, end and data updated and the
change kept in `revisions`; the others are merged into it (RetiredIncident: their links redirect to it). A stored
one no detected incident covers is retired as no longer found (its links answer 410 with what happened); a
detected one nothing covers is created, with a new id (ids are never reused). A detected incident whose
explanation finds nothing grown (verdict healthy) is not an incident: it is not stored, or retired as no_cause.

The explanation (explain.py) runs when an incident is created, when its onset or end moves, when a closed one's
peak or baseline changed (late spans), and at most every EXPLAIN_EVERY while it is open. A rerun on the same data
changes nothing.
"""
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q

from analysis.diagnosis.thresholds import Thresholds
from analysis.errors import AnalysisError
from analysis.incidents.detection import Found
from analysis.incidents.explain import explain
from analysis.models import Incident, RetiredIncident
from analysis.windows import iso, parse_instant

MATCH = timedelta(minutes=2)  # an onset moving this little is the same incident
EXPLAIN_EVERY = timedelta(minutes=5)  # an open incident's explanation is refreshed at most this often
UNEXPLAINED = "unknown"  # the verdict when the explanation could not run (its reason is in detail)
NO_CAUSE = "healthy"  # an explanation that finds nothing grown: not an incident


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
            "baseline": incident.baseline, "peak": incident.peak, "path": incident.path, "url": url,
            "end_reason": (incident.detail or {}).get("end_reason"), "revisions": incident.revisions}


def reconcile(project_id: int, service: str, route: str, start: datetime, end: datetime, found: list[Found],
              now: datetime, th: Thresholds) -> dict:
    """Make the stored incidents with an onset in [start, end) those of `found` (see the module docstring).
    `end` is where the detection stopped: an open incident is explained up to it. Returns {"created",
    "updated", "closed", "deleted" (retired: no longer found, or no cause), "merged", "unchanged"} counts."""
    counts = dict.fromkeys(("created", "updated", "closed", "deleted", "merged", "unchanged"), 0)
    with transaction.atomic():
        stored = list(Incident.objects.select_for_update().filter(
            project_id=project_id, service=service, route=route, start__gte=start, start__lt=end).order_by("id"))
        claims = _claims(stored, found, end)
        for k, item in enumerate(found):
            rows = claims.get(k, [])
            row, others = (rows[0], rows[1:]) if rows else (None, [])
            outcome = _store(row, item, project_id, service, route, end, now, th)
            if outcome == "dropped":  # nothing grown: not an incident
                for gone in rows:
                    _retire(gone, RetiredIncident.NO_CAUSE, now, "re-detection found nothing grown in it")
                    counts["deleted"] += 1
                continue
            counts[outcome] += 1
            for other in others:
                _merge(other, row, now)
                counts["merged"] += 1
        claimed = {r.pk for rows in claims.values() for r in rows}
        for row in stored:
            if row.pk not in claimed:
                _retire(row, RetiredIncident.NOT_FOUND, now, "no longer found when its minutes were judged again "
                        "(more spans arrived; the latency was within its baseline)")
                counts["deleted"] += 1
    return counts


def _claims(stored: list[Incident], found: list[Found], end: datetime) -> dict[int, list[Incident]]:
    """found index -> the stored incidents that go to it, oldest id first: each stored one goes to the detected one
    it overlaps longest, else to one whose onset is within MATCH of its own; the others go nowhere."""
    def span(a_start, a_end, b_start, b_end) -> float:
        return ((min(a_end or end, b_end or end) - max(a_start, b_start)).total_seconds())
    claims: dict[int, list[Incident]] = {}
    for row in stored:
        overlaps = [(span(row.start, row.end, f.start, f.end), k) for k, f in enumerate(found)]
        best = max(overlaps, default=(0, None))
        if best[0] <= 0:
            near = [(abs(row.start - f.start), k) for k, f in enumerate(found) if abs(row.start - f.start) <= MATCH]
            best = (0, min(near)[1]) if near else (0, None)
        if best[1] is not None:
            claims.setdefault(best[1], []).append(row)
    return claims


def _merge(row: Incident, into: Incident, now: datetime) -> None:
    """Retire `row` into `into` (its links redirect there) and note it in `into`'s revisions."""
    into.revisions = into.revisions + [{"at": iso(now), "what": "merged", "id": row.pk,
                                        "text": f"incident #{row.pk} (from {row.start:%H:%M}) merged into this one "
                                                f"as more spans arrived"}]
    # after the revision: deleting the row clears its pk
    _retire(row, RetiredIncident.MERGED, now, f"merged into incident #{into.pk} when its minutes were judged again",
            into=into.pk)
    into.save(update_fields=["revisions"])


def _retire(row: Incident, reason: str, now: datetime, message: str, into: int | None = None) -> None:
    """Replace a stored incident by its RetiredIncident (same id); incidents merged into it follow to `into`."""
    RetiredIncident.objects.update_or_create(id=row.pk, defaults={
        "project_id": row.project_id, "service": row.service, "route": row.route, "start": row.start, "end": row.end,
        "verdict": row.verdict, "reason": reason, "merged_into": into, "message": message, "retired_at": now})
    if into is not None:
        RetiredIncident.objects.filter(merged_into=row.pk).update(merged_into=into)
    else:  # those merged into it have nowhere to go either
        RetiredIncident.objects.filter(merged_into=row.pk).update(reason=reason, merged_into=None, message=message)
    row.delete()


def _store(row: Incident | None, item: Found, project_id, service, route, until, now, th) -> str:
    """Create or update the row of one detected incident; returns which of the counts it was, or "dropped" when its
    explanation found nothing grown (the caller retires `row`)."""
    fields = {"start": item.start, "end": item.end, "baseline": item.baseline.summary(), "peak": item.peak()}
    departed = {"departed": item.departed(th), "baseline_source": item.baseline.source,
                "baseline_minutes": item.baseline.minutes, **({"slice": item.slice} if item.slice else {}),
                **({"end_reason": item.end_reason} if item.end_reason else {})}
    if row is None:
        row = Incident(project_id=project_id, service=service, route=route, detected_at=now, **fields)
        _explain(row, departed, until, now)
        if row.verdict == NO_CAUSE:
            return "dropped"
        row.save()
        return "created"
    moved = row.start != item.start or row.end != item.end
    data_changed = row.baseline != fields["baseline"] or row.peak != fields["peak"]
    stale = item.end is None and now - _explained_at(row) >= EXPLAIN_EVERY
    if not (moved or data_changed or stale or (row.detail or {}).get("end_reason") != item.end_reason):
        return "unchanged"
    closing = row.end is None and item.end is not None
    row.revisions = row.revisions + _revisions(row, item, now)
    for name, value in fields.items():
        setattr(row, name, value)
    if moved or stale or item.end is not None:
        _explain(row, departed, until, now)
        if row.verdict == NO_CAUSE:
            return "dropped"
    else:  # an open incident's newest peak waits for its next explanation
        row.detail = {**{k: v for k, v in row.detail.items() if k != "end_reason"}, **departed}
    row.updated_at = now
    row.save()
    return "closed" if closing else "updated"


def _revisions(row: Incident, item: Found, now: datetime) -> list[dict]:
    """What re-detection changed of a stored incident, as its revisions: an onset that moved, an end of a closed
    incident that moved (an open one closing is not a revision)."""
    out = []
    if row.start != item.start:
        out.append({"at": iso(now), "what": "onset", "from": iso(row.start), "to": iso(item.start),
                    "text": f"onset revised from {row.start:%H:%M} to {item.start:%H:%M} as more spans arrived"})
    if row.end is not None and row.end != item.end:
        to = f"{item.end:%H:%M}" if item.end else "ongoing"
        out.append({"at": iso(now), "what": "end", "from": iso(row.end), "to": iso(item.end) if item.end else None,
                    "text": f"end revised from {row.end:%H:%M} to {to} as more spans arrived"})
    return out


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
