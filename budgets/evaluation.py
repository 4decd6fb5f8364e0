"""Budget evaluation: measure a budget's percentile over a window and keep the overspent stages."""
from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from analysis.fairness import Deadline, by_project, run_in_turns
from analysis.panels import budgets as stage_percentiles
from analysis.scope import Scope
from analysis.windows import recent_window
from budgets.models import Budget, BudgetViolation
from budgets.stages import TOTAL

# below this many requests with a value, a percentile says too little to call a violation
MIN_REQUESTS = 20


def evaluate(budget: Budget, start: datetime, end: datetime, min_requests: int = MIN_REQUESTS) -> list[BudgetViolation]:
    """Store and return the violations of `budget` over [start, end): "total" and each targeted stage whose
    measured percentile exceeds its target, on at least `min_requests` requests. Replaces the window's
    earlier violations (a stage back within budget loses its violation)."""
    measured = stage_percentiles.build(Scope(budget.project_id, budget.service, start, end, route=budget.route),
                                       budget.percentile).stages
    targets = {TOTAL: budget.total_ms, **{t.stage: t.target_ms for t in budget.stages.all()}}
    now = timezone.now()
    found = []
    for stage, target in targets.items():
        value, count = measured[stage].value_ms, measured[stage].count
        if count < min_requests or value is None or value <= target:
            continue
        found.append(BudgetViolation(budget=budget, start=start, end=end, stage=stage, percentile=budget.percentile,
                                     measured_ms=value, target_ms=target, over_ms=value - target, requests=count,
                                     computed_at=now))
    with transaction.atomic():
        BudgetViolation.objects.filter(budget=budget, start=start, end=end).delete()
        return BudgetViolation.objects.bulk_create(found)


def evaluate_active(start: datetime, end: datetime, min_requests: int = MIN_REQUESTS,
                    deadline: Deadline | None = None, mark: bool = False) -> dict:
    """Evaluate the budgets over [start, end), projects in turns, the ones evaluated longest ago first (so those a
    run left are the next run's first), until the deadline. Loops over configured budgets only, never over the
    services of the data. `mark`: record `end` as evaluated for each (the minute job's recent windows, which
    alerts read: see not_evaluated()). Returns {"budgets": evaluated, "violations": stored, "deferred": budgets
    left, "errors"}."""
    budgets = list(Budget.objects.prefetch_related("stages")
                   .order_by(F("evaluated_until").asc(nulls_first=True), "project_id", "pk"))
    violations = 0

    def unit(budget: Budget) -> str:
        nonlocal violations
        violations += len(evaluate(budget, start, end, min_requests))
        if mark:  # never back, when an old window is redone
            Budget.objects.filter(pk=budget.pk).exclude(evaluated_until__gte=end).update(evaluated_until=end)
        return "evaluated"

    tally = run_in_turns(by_project(budgets), unit, deadline or Deadline(None), "budgets")
    return {"budgets": tally.done, "violations": violations, "deferred": len(budgets) - tally.done - tally.errors,
            "errors": tally.errors}


def evaluate_recent(now: datetime, deadline: Deadline | None = None) -> dict:
    """The minute job: the budgets over the recent window ending at `now`'s minute (the window of the diagnoses
    and alert rules), as evaluate_active. Returns {"window": [start, end] (ISO), "budgets", "violations",
    "deferred", "errors"}."""
    start, end = recent_window(now)
    summary = evaluate_active(start, end, deadline=deadline, mark=True)
    return {"window": [start.isoformat(), end.isoformat()], **summary}


def not_evaluated(budget_ids, end: datetime) -> set[int]:
    """The ids among `budget_ids` that the minute job has not yet evaluated over the recent window ending at `end`
    (or a later one): their violation rows are not there yet, whatever the budget (also when a run had no time
    for it). For the others, a window without violation rows is within budget. Read from the DB, not from
    instances that may predate the evaluation."""
    done = Budget.objects.filter(pk__in=budget_ids, evaluated_until__gte=end).values_list("pk", flat=True)
    return set(budget_ids) - set(done)


def violated_now(project) -> list[BudgetViolation]:
    """The project's budget violations of each budget's latest evaluated window (over their limit now), worst
    first: what the Overview lists and its statuses read."""
    return list(BudgetViolation.objects.filter(budget__project=project, end=F("budget__evaluated_until"))
                .select_related("budget").order_by("-over_ms"))
