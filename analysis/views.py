"""Read API: GET /api/v1/diagnosis for a session member of the project or a key with the read scope."""
import logging
from functools import wraps

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from analysis.diagnosis_service import run_diagnosis
from analysis.windows import parse_instant
from analysis.errors import AnalysisError
from store.client import TIMEOUT_EXCEEDED, ClickHouseError
from projects.keys import KeyError_, authorize
from projects.models import Project

log = logging.getLogger(__name__)


def error(status: int, reason: str, message: str) -> JsonResponse:
    return JsonResponse({"error": reason, "message": message}, status=status)


def readable_project(request) -> Project:
    """The project this caller may read: the key's own, or one the session user belongs to.

    A Bearer header always wins over the session. A session user with several projects (a superuser sees
    all) names one with ?project=NAME; a project they cannot see answers not_found, as a made-up name does.
    """
    name = request.GET.get("project", "")
    header = request.headers.get("Authorization")
    if header or not request.user.is_authenticated:
        key = authorize(header, "read")  # no header and no session: missing_key, 401
        if name and name != key.project_name:
            raise AnalysisError("not_found", f"no project {name!r} for this key", status=404)
        return Project.objects.get(pk=key.project_id)
    visible = Project.objects.all() if request.user.is_superuser else request.user.projects.all()
    if name:
        project = visible.filter(name=name).first()
        if project is None:
            raise AnalysisError("not_found", f"no project {name!r} for this user", status=404)
        return project
    projects = list(visible.order_by("name")[:2])
    if not projects:
        raise AnalysisError("not_found", "this user belongs to no project", status=404)
    if len(projects) > 1:
        raise AnalysisError("missing_parameter", "this user belongs to several projects: pass ?project=NAME")
    return projects[0]


def store_error(exc: ClickHouseError) -> JsonResponse:
    """503 when the store did not answer a read: query_timeout (CLICKHOUSE_QUERY_TIMEOUT_SECONDS), else store_error."""
    if exc.code == TIMEOUT_EXCEEDED:
        return error(503, "query_timeout", f"the query ran longer than {settings.CLICKHOUSE_QUERY_TIMEOUT_SECONDS} s "
                                           "and was stopped; ask for a shorter window or a narrower filter")
    log.error("read API query failed: %s", exc, exc_info=exc)
    return error(503, "store_error", "the span store did not answer (details in the server log); retry later")


def project_reader(view):
    """Resolve the readable project (see readable_project) and pass it to the view; errors answer as JSON."""
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            project = readable_project(request)
        except KeyError_ as exc:
            return error(exc.status, exc.reason, str(exc))
        except AnalysisError as exc:
            return error(exc.status, exc.reason, exc.message)
        try:
            return view(request, project, *args, **kwargs)
        except ClickHouseError as exc:
            return store_error(exc)

    return wrapper


@require_GET
@project_reader
def diagnosis(request, project: Project) -> JsonResponse:
    """The flowchart's verdict for one service window, with findings, path, fixes and the evidence."""
    params = request.GET
    try:
        start = parse_instant(params.get("start"), "start")
        end = parse_instant(params.get("end"), "end")
        result = run_diagnosis(project.pk, params.get("service", ""), start, end,
                               route=params.get("route", ""), tenant=params.get("tenant", ""))
    except AnalysisError as exc:
        return error(exc.status, exc.reason, exc.message)
    return JsonResponse(result)
