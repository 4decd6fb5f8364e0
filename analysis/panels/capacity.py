"""The Capacity page's numbers: analysis.capacity's worksheet of the scope (its route narrows it; its tenant does
not apply: instances, GPU-hours and load are the service's). The API's document (analysis.capacity.checked) and
the weekly review read the same build()."""
from analysis import capacity
from analysis.capacity.objectives import Objective, objective
from analysis.capacity.types import Capacity
from analysis.scope import Scope


def build(scope: Scope) -> Capacity:
    return capacity.build(scope.project_id, scope.service, scope.start, scope.end, route=scope.route)


def judged_against(scope: Scope) -> Objective:
    """The objective build() judges load against (an SLO's, a budget's, or the diagnosis threshold): a page keeping
    its numbers keeps them under it too, so a new SLO shows at once."""
    return objective(scope.project_id, scope.service, scope.route)
