"""GET /api/v1/slos: the project's SLOs with where each stands, for a key with the read scope or a member's session
(the read API's rule: analysis/views.py). Errors are raised as ReasonErrors and answered by
latency_obs/api_errors.py."""
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from analysis.panels import slos as numbers
from analysis.reads import slos as slo_status
from analysis.rollups import freshness
from analysis.scope import Scope
from analysis.views import project_reader
from analysis.windows import parse_instant
from projects.models import Project
from slos.models import Slo


def document(slo: Slo, status: slo_status.SloStatus) -> dict:
    """One SLO's promise and its numbers (analysis.reads.slos.as_json)."""
    return {"id": slo.pk, "service": slo.service, "route": slo.route, "tenant": slo.tenant, "signal": slo.signal,
            "threshold_ms": slo.threshold_ms, "objective": slo.objective, "window_days": slo.window_days,
            "description": slo.description, **slo_status.as_json(status)}


@require_GET
@project_reader
def slos(request, project: Project) -> JsonResponse:
    """Every SLO of the project (?service= narrows to one service's) over its rolling window ending at ?end= (ISO
    8601; default now), by service."""
    end = parse_instant(request.GET["end"], "end") if request.GET.get("end") else timezone.now()
    rows = project.slos.order_by("service", "route", "tenant", "signal", "pk")
    if request.GET.get("service"):
        rows = rows.filter(service=request.GET["service"])
    freshness.refresh(project.pk, end - slo_status.RECENT, end, wait=True)  # spans stored seconds ago count
    found = numbers.build(Scope(project.pk, request.GET.get("service", ""), end - slo_status.RECENT, end), rows)
    return JsonResponse({"project": project.name, "end": end.isoformat(),
                         "slos": [document(r.slo, r.status) for r in found.rows]})
