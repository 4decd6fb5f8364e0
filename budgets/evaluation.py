"""Budget evaluation: measure a budget's percentile over a window and keep the overspent stages."""
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from budgets.models import Budget, BudgetViolation
from budgets.queries import stage_percentiles
from budgets.stages import TOTAL

# below this many requests with a value, a percentile says too little to call a violation
MIN_REQUESTS = 20


def evaluate(budget: Budget, start: datetime, end: datetime, min_requests: int = MIN_REQUESTS) -> list[BudgetViolation]:
    """Store and return the violations of `budget` over [start, end): "total" and each targeted stage whose
    measured percentile exceeds its target, on at least `min_requests` requests. Replaces the window's
    earlier violations (a stage back within budget loses its violation)."""
    measured = stage_percentiles(budget.project_id, budget.service, start, end, budget.percentile, budget.route)
    targets = {TOTAL: budget.total_ms, **{t.stage: t.target_ms for t in budget.stages.all()}}
    now = timezone.now()
    found = []
    for stage, target in targets.items():
        value, count = measured[stage]["value"], measured[stage]["count"]
        if count < min_requests or value is None or value <= target:
            continue
        found.append(BudgetViolation(budget=budget, start=start, end=end, stage=stage, percentile=budget.percentile,
                                     measured_ms=value, target_ms=target, over_ms=value - target, requests=count,
                                     computed_at=now))
    with transaction.atomic():
        BudgetViolation.objects.filter(budget=budget, start=start, end=end).delete()
        return BudgetViolation.objects.bulk_create(found)


def evaluate_active(start: datetime, end: datetime, min_requests: int = MIN_REQUESTS) -> dict:
    """Evaluate every budget over [start, end); returns {"budgets": evaluated, "violations": stored}."""
    budgets = Budget.objects.prefetch_related("stages")
    violations = sum(len(evaluate(b, start, end, min_requests)) for b in budgets)
    return {"budgets": len(budgets), "violations": violations}
