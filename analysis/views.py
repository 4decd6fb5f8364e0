"""Read API: GET /api/v1/diagnosis for a session member of the project or a key with the read scope.

Errors are raised, not answered here: every one is a ReasonError (a key, membership, parameter or store
failure), which latency_obs/api_errors.py turns into {"error": reason, "message": ...} with its status.
"""
from functools import wraps

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from analysis.diagnosis_service import run_diagnosis
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


@require_GET
@project_reader
def diagnosis(request, project: Project) -> JsonResponse:
    """The flowchart's verdict for one service window, with findings, path, fixes and the evidence."""
    params = request.GET
    start = parse_instant(params.get("start"), "start")
    end = parse_instant(params.get("end"), "end")
    result = run_diagnosis(project.pk, params.get("service", ""), start, end,
                           route=params.get("route", ""), tenant=params.get("tenant", ""))
    return JsonResponse(result)
