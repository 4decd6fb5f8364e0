"""A latency budget as the objective the capacity worksheet judges load against (analysis/capacity/objectives.py)."""
from analysis.capacity.objectives import Objective
from budgets.models import Budget, StageTarget


def budget_objective(project_id: int, service: str, route: str = "") -> Objective | None:
    """The service's budget (the route's own, else the one over all routes) as an objective: its TTFT stage target
    when it has one (load shows in the first token before the total), else its total, at the budget's percentile.
    None without a budget."""
    budget = (Budget.objects.filter(project_id=project_id, service=service, route__in=[route, ""])
              .order_by("-route").first())  # "" sorts last: the route's own budget first
    if budget is None:
        return None
    ttft = StageTarget.objects.filter(budget=budget, stage="ttft").first()
    name = budget.name or f"{service}{budget.route}"
    if ttft is not None:
        return Objective("ttft", budget.percentile, ttft.target_ms, "latency budget", name)
    return Objective("total", budget.percentile, budget.total_ms, "latency budget", name)
