"""The Incidents API's documents, shared by GET /api/v1/incidents[/<id>] and `manage.py incidents`.

Window checks are the diagnosis API's (analysis.windows). An empty list means "no incident" only when the window
is judged to its end (`judged_until` = the window's end, `pending` 0: queue.judgement); otherwise the minutes after
`judged_until` are not judged yet. A service the project never sent is unknown_service (404), not an empty list.
An incident id lives for ever: a merged one answers with the id it was merged into, a retired one with what happened.
"""
from collections.abc import Callable
from datetime import datetime

from analysis.errors import AnalysisError
from analysis.incidents.queue import check_known, judgement
from analysis.incidents.records import incident_json, incidents_overlapping
from analysis.models import Incident, RetiredIncident
from analysis.windows import check_window, iso
from store.reasons import Reason

UrlOf = Callable[[Incident], str]  # the incident page's absolute address


def window_document(project_id: int, service: str, start: datetime, end: datetime, url_of: UrlOf,
                    route: str = "", tenant: str = "", now: datetime | None = None) -> dict:
    """{"service", "start", "end", "incidents": [incident_json(...)], "judged_until", "pending", "no_baseline"}:
    the stored incidents of `service` overlapping [start, end), oldest first (records.incidents_overlapping for the
    route and tenant rules), and what of the window is judged (queue.Judgement).

    Raises AnalysisError: missing_parameter without a service, bad_date / window_too_large for the window,
    unknown_service (404) for a service the project never sent (the message names the closest ones)."""
    if not service:
        raise AnalysisError(Reason.MISSING_PARAMETER, "'service' is required")
    check_window(start, end)
    check_known(project_id, service)
    found = incidents_overlapping(project_id, service, start, end, route=route, tenant=tenant)
    return {"service": service, "start": iso(start), "end": iso(end),
            "incidents": [incident_json(i, url_of(i)) for i in found],
            **judgement(project_id, service, start, end, now).json()}


def one_document(project_id: int, incident_id, url_of: UrlOf) -> tuple[int, dict]:
    """(200, incident_json with its "service" and "route") for the project's incident `incident_id`; for a retired
    id (RetiredIncident): (301, {"merged_into": id, ...}) when it was merged into another, else (410, what happened).
    AnalysisError not_found (404) for an id never used in this project (another project's is not told apart)."""
    row = Incident.objects.filter(project_id=project_id, pk=incident_id).select_related("project").first()
    if row is not None:
        return 200, {**incident_json(row, url_of(row)), "service": row.service, "route": row.route}
    retired = RetiredIncident.objects.filter(project_id=project_id, pk=incident_id).first()
    if retired is None:
        raise AnalysisError(Reason.NOT_FOUND, f"no incident {incident_id} in this project")
    return retired_document(retired)


def retired_document(retired: RetiredIncident) -> tuple[int, dict]:
    """(301, {"merged_into", ...}) or (410, {"error": "gone", ...}) for a retired incident id."""
    common = {"id": retired.pk, "service": retired.service, "route": retired.route, "start": iso(retired.start),
              "end": iso(retired.end) if retired.end else None, "verdict": retired.verdict,
              "reason": retired.reason, "message": retired.message, "retired_at": iso(retired.retired_at)}
    if retired.merged_into is not None:
        return 301, {"error": "merged", "merged_into": retired.merged_into, **common}
    return 410, {"error": "gone", **common}
