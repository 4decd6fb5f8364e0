"""Read API: GET /api/v1/diagnosis, /api/v1/overview, /api/v1/capacity and /api/v1/incidents[/<id>] for a session
member of the project or a key with the read scope.

Errors are raised, not answered here: every one is a ReasonError (a key, membership, parameter or store
failure), which latency_obs/api_errors.py turns into {"error": reason, "message": ...} with its status.
"""
from functools import wraps

from django.http import JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from analysis import capacity as capacity_
from analysis.diagnosis.service import run_diagnosis
from analysis.incidents import documents
from analysis.incidents.headlines import incident_path
from analysis.panels import overview as overview_
from analysis.rollups import freshness
from analysis.scope import Scope
from analysis.windows import parse_instant
from projects import membership
from projects.models import Project


def readable_project(request) -> Project:
    """The project this caller may read (projects.membership.readable_project: the key's, or the session's)."""
    return membership.readable_project(request.user, request.headers.get("Authorization"),
                                       request.GET.get("project", ""))


def project_reader(view):
    """Resolve the readable project and pass it to the view."""
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        return view(request, readable_project(request), *args, **kwargs)

    return wrapper


def service_window(request, project: Project) -> Scope:
    """The Scope of ?service=&start=&end=[&route=&tenant=] (instants ISO 8601: bad_date / missing_parameter), its
    hours refreshed first: spans ingested seconds ago are counted, not a minute later."""
    params = request.GET
    start = parse_instant(params.get("start"), "start")
    end = parse_instant(params.get("end"), "end")
    freshness.refresh(project.pk, start, end, wait=True)  # an API answer counts what is stored now
    return Scope(project.pk, params.get("service", ""), start, end, route=params.get("route", ""),
                 tenant=params.get("tenant", ""))


@require_GET
@project_reader
def diagnosis(request, project: Project) -> JsonResponse:
    """The flowchart's verdict for one service window, with findings, path, fixes and the evidence."""
    return JsonResponse(run_diagnosis(service_window(request, project)))


@require_GET
@project_reader
def overview(request, project: Project) -> JsonResponse:
    """The Overview page's numbers of one service window (analysis/panels/overview.py: docs/api.md#overview)."""
    return JsonResponse(overview_.document(service_window(request, project)))


@require_GET
@project_reader
def capacity(request, project: Project) -> JsonResponse:
    """The capacity worksheet of one service window (?route= narrows it): docs/capacity.md."""
    params = request.GET
    start = parse_instant(params.get("start"), "start")
    end = parse_instant(params.get("end"), "end")
    freshness.refresh(project.pk, start, end, wait=True)  # an API answer counts what is stored now
    return JsonResponse(capacity_.document(project.pk, params.get("service", ""), start, end,
                                           route=params.get("route", "")))


def _page_url(request, project: Project):
    """The incident page's absolute address, on the host this request came to."""
    return lambda incident: request.build_absolute_uri(incident_path(incident.pk, project.name))


@require_GET
@project_reader
def incidents(request, project: Project) -> JsonResponse:
    """The service's stored incidents overlapping the window, oldest first (?route= / ?tenant= narrow them)."""
    params = request.GET
    start = parse_instant(params.get("start"), "start")
    end = parse_instant(params.get("end"), "end")
    return JsonResponse(documents.window_document(project.pk, params.get("service", ""), start, end,
                                                  _page_url(request, project), route=params.get("route", ""),
                                                  tenant=params.get("tenant", "")))


@require_GET
@project_reader
def incident(request, project: Project, incident_id: int) -> JsonResponse:
    """One stored incident of the project (404 for another project's); a merged one redirects to the incident it
    was merged into (301, {"merged_into": id}), a retired one answers 410 with what happened."""
    status, doc = documents.one_document(project.pk, incident_id, _page_url(request, project))
    response = JsonResponse(doc, status=status)
    if status == 301:
        query = f"?{request.GET.urlencode()}" if request.GET else ""
        response["Location"] = reverse("api-incident", args=[doc["merged_into"]]) + query
    return response
