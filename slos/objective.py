"""An SLO as the objective the capacity worksheet judges load against (analysis/capacity/objectives.py)."""
import math

from analysis.capacity.objectives import Objective
from slos.models import Slo


def slo_objective(project_id: int, service: str, route: str = "") -> Objective | None:
    """The service's SLO (the route's own, else one over all routes; TTFT before total; not a tenant's) as an
    objective: "99 % of requests TTFT < 1 s" is TTFT p99 under 1 s (an objective between two percentiles: the lower
    one, 99.9 % -> p99). None without an SLO."""
    slo = (Slo.objects.filter(project_id=project_id, service=service, route__in=[route, ""], tenant="")
           .order_by("-route", "-signal", "-objective", "threshold_ms").first())  # "ttft" sorts after "total"
    if slo is None:
        return None
    return Objective(slo.signal, math.floor(slo.objective * 100 + 1e-9), slo.threshold_ms, "SLO", slo.description)
