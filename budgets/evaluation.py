"""Budget evaluation: measure a budget's percentile over a window and keep the overspent stages."""
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from analysis import queries
from analysis.models import JobWatermark
from analysis.windows import recent_window
from budgets.models import Budget, BudgetViolation
from budgets.stages import TOTAL

# below this many requests with a value, a percentile says too little to call a violation
MIN_REQUESTS = 20
# the end of the latest recent window the minute job evaluated (a JobWatermark row)
WATERMARK = "budgets"


def evaluate(budget: Budget, start: datetime, end: datetime, min_requests: int = MIN_REQUESTS) -> list[BudgetViolation]:
    """Store and return the violations of `budget` over [start, end): "total" and each targeted stage whose
    measured percentile exceeds its target, on at least `min_requests` requests. Replaces the window's
    earlier violations (a stage back within budget loses its violation)."""
    measured = queries.stage_percentiles(budget.project_id, budget.service, start, end, budget.percentile, budget.route)
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


def evaluate_recent(now: datetime) -> dict:
    """The minute job: every budget over the recent window ending at `now`'s minute (the window of the
    diagnoses and alert rules), then marks that window evaluated (see evaluated()).
    Returns {"window": [start, end] (ISO), "budgets", "violations"}."""
    start, end = recent_window(now)
    summary = evaluate_active(start, end)
    JobWatermark.objects.get_or_create(name=WATERMARK, defaults={"at": end})
    JobWatermark.objects.filter(name=WATERMARK, at__lt=end).update(at=end)  # never back, when an old window is redone
    return {"window": [start.isoformat(), end.isoformat()], **summary}


def evaluated(end: datetime) -> bool:
    """True once the minute job has evaluated the recent window ending at `end` (or a later one), so a window
    without violation rows is within budget. False before: its rows are not there yet, whatever the budgets."""
    return JobWatermark.objects.filter(name=WATERMARK, at__gte=end).exists()
