"""Evaluating alert rules: the rule's kind measures each group over the window (alerts/kinds.py), then each
group's state moves by one evaluation and sends its message on a change (alerts/states.py).

The minute pipeline (latency_obs/pipeline.py) calls evaluate_all after the diagnoses and budgets of the same
minute are stored, so the verdict and budget_violation kinds read those.
"""
from datetime import datetime
from functools import partial

from django.db.models import F

from alerts import states
from alerts.kinds import KINDS
from alerts.models import AlertRule, AlertState
from analysis.fairness import Deadline, by_project, run_in_turns
from analysis.windows import recent_window


def measure(rule: AlertRule, start: datetime, end: datetime) -> dict[str, tuple]:
    """{group_key: (value, requests)}; requests None when the kind has no count of its own (budgets)."""
    return KINDS[rule.kind].measure(rule, start, end)


def evaluate_rule(rule: AlertRule, start: datetime, end: datetime, now: datetime) -> dict[str, str]:
    """Evaluate `rule` over [start, end) at `now`; returns {group_key: state} of the groups evaluated.
    Groups under min_requests keep their state."""
    kind = KINDS[rule.kind]
    results = {}
    for key, (value, requests) in kind.measure(rule, start, end).items():
        if requests is not None and requests < rule.min_requests:
            continue
        message = partial(kind.summary, rule, key, value=value, requests=requests, start=start, end=end)
        results[key] = states.record(rule, key, value, kind.breached(rule, value), now, message,
                                     hold_seconds=kind.hold_seconds(rule))
    return results


def evaluate_all(now: datetime, deadline: Deadline | None = None) -> dict:
    """The enabled rules over the recent window ending at `now`'s minute, projects in turns, the rules evaluated
    longest ago first (so those a run left are the next run's first), until the deadline. Loops over configured
    rules only, never over the services of the data. Returns {"rules": evaluated, "firing": groups firing among
    them, "deferred": rules left, "errors"}."""
    start, end = recent_window(now)
    rules = list(AlertRule.objects.filter(enabled=True).select_related("project", "budget")
                 .order_by(F("last_evaluated_at").asc(nulls_first=True), "project_id", "pk"))
    firing = 0

    def unit(rule: AlertRule) -> str:
        nonlocal firing
        firing += sum(s == AlertState.FIRING for s in evaluate_rule(rule, start, end, now).values())
        AlertRule.objects.filter(pk=rule.pk).update(last_evaluated_at=now)
        return "evaluated"

    tally = run_in_turns(by_project(rules), unit, deadline or Deadline(None), "alert rules")
    return {"rules": tally.done, "firing": firing, "deferred": len(rules) - tally.done - tally.errors,
            "errors": tally.errors}
