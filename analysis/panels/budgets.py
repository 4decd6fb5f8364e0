"""The numbers a latency budget is judged on: total and each stage a budget can target at one percentile over a
scope (queries.stage_percentiles, exact). budgets.evaluation compares them with the targets and stores the
violations the Budgets page, the Overview's statuses, the budget_violation alert and the weekly review show."""
from dataclasses import dataclass

from analysis.reads import queries
from analysis.scope import Scope

PERCENTILES = queries.PERCENTILES  # the percentiles a budget may be measured at


@dataclass(frozen=True)
class Stage:
    """One stage's percentile in ms (None when no request has the stage) and how many requests have it."""
    value_ms: float | None
    count: int


@dataclass(frozen=True)
class Stages:
    """percentile: of PERCENTILES; requests: the scope's attempts; stages: "total" and each stage code
    (budgets/stages.py names them; sql/stage_percentiles.sql measures them) -> its Stage."""
    percentile: int
    requests: int
    stages: dict[str, Stage]


def build(scope: Scope, percentile: int = 95) -> Stages:
    """Over every tenant of the scope's service and route (its tenant is not applied); ValueError for a percentile
    outside PERCENTILES."""
    measured = queries.stage_percentiles(scope, percentile)
    requests = measured.pop("requests")
    return Stages(percentile=percentile, requests=requests,
                  stages={code: Stage(value_ms=m["value"], count=m["count"]) for code, m in measured.items()})
