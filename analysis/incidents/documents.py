"""The Incidents API's documents, shared by GET /api/v1/incidents[/<id>] and `manage.py incidents`.

Window checks are the diagnosis API's (analysis.windows); an empty list is an answer, not an error: a service
without incidents in the window is a healthy one, or one without traffic, which the diagnosis API tells apart.
"""
from collections.abc import Callable
from datetime import datetime

from analysis.errors import AnalysisError
from analysis.incidents.records import incident_json, incidents_overlapping
from analysis.models import Incident
from analysis.windows import check_window, iso

UrlOf = Callable[[Incident], str]  # the incident page's absolute address


def window_document(project_id: int, service: str, start: datetime, end: datetime, url_of: UrlOf,
                    route: str = "", tenant: str = "") -> dict:
    """{"service", "start", "end", "incidents": [incident_json(...)]}: the stored incidents of `service` overlapping
    [start, end), oldest first (records.incidents_overlapping for the route and tenant rules).

    Raises AnalysisError: missing_parameter without a service, bad_date / window_too_large for the window."""
    if not service:
        raise AnalysisError("missing_parameter", "'service' is required")
    check_window(start, end)
    found = incidents_overlapping(project_id, service, start, end, route=route, tenant=tenant)
    return {"service": service, "start": iso(start), "end": iso(end),
            "incidents": [incident_json(i, url_of(i)) for i in found]}


def one_document(project_id: int, incident_id, url_of: UrlOf) -> dict:
    """incident_json of the project's incident `incident_id`, with its "service" and "route"; AnalysisError
    not_found (404) for a missing id or another project's (the two are not told apart)."""
    row = Incident.objects.filter(project_id=project_id, pk=incident_id).select_related("project").first()
    if row is None:
        raise AnalysisError("not_found", f"no incident {incident_id} in this project", status=404)
    return {**incident_json(row, url_of(row)), "service": row.service, "route": row.route}
