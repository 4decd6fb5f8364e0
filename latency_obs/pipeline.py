"""The minute pipeline: materialize -> incidents -> diagnose -> budgets -> alert rules, in order, for one `now`.

Each step reads what the steps before it stored for the same minute: the incidents and the diagnoses read the
request buckets just materialized, and the alert rules read the incidents, diagnoses and budget violations of the
same recent window
(analysis.windows.recent_window(now)). Each step is also a task of its own app, for manual runs.

The order is fixed, and each step has a time budget (PIPELINE_STEP_BUDGET_SECONDS, together under the minute),
so no step waits behind another's backlog and one worker thread (the embedded mode's) runs all five every
minute. A step works in small units (a project's dirty hour, a service with new spans, a budget, a rule),
serves projects in turns and starts no unit that would not fit its budget (analysis/fairness.py); what it
leaves is queued in the DB (analysis/work/backlog.py) or ordered by age, and the next minute does it first. So one
project's flood of services delays its own work only: the others get a unit in every turn.

A failing step is logged and counted, and the steps after it still run on what is stored: a diagnosis a
minute older, buckets not yet refreshed. Where an input is missing, the alert kind that reads it keeps its
groups' state (budget_violation reads only windows the budgets step has evaluated for that budget; verdict,
the latest diagnosis). A step whose units raised (each logged) counts as failed too, after the others ran.
This module sits above the apps: analysis, budgets and alerts never import it.
"""
import logging
import time
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded

from alerts.rules import evaluate_all
from analysis.fairness import step_deadline
from analysis.incidents.jobs import judge_queued
from analysis.work.jobs import diagnose_recent, materialize_since_watermark
from budgets.evaluation import evaluate_recent

log = logging.getLogger(__name__)

STEPS = (
    ("materialize", materialize_since_watermark),
    ("incidents", judge_queued),  # before the diagnoses: an incident is stored (and alerted) a step sooner
    ("diagnose", diagnose_recent),
    ("budgets", evaluate_recent),
    ("alert_rules", evaluate_all),
)


class PipelineError(Exception):
    """Some steps failed, each logged with its traceback: args are (which failed, the pipeline's summary)."""


def run(now: datetime) -> dict:
    """Run every step at `now`, in order, each within its budget, whatever failed before it. Returns
    {"now": ISO, "steps": {name: the step's summary (with "deferred": units left for the next minute), or
    {"error": "Type: message"}}, "seconds": {name: time taken}, "units": {name: units run}, "last_unit_began_s":
    {name: the time the step had taken when it began its last unit (None: no unit)}, "failed": [steps that raised or
    whose units did]}. A step takes longer than its budget by its last unit (and its search for work), never by a unit
    begun after the budget: last_unit_began_s shows which."""
    out: dict = {"now": now.isoformat(), "steps": {}, "seconds": {}, "units": {}, "last_unit_began_s": {}, "failed": []}
    for name, step in STEPS:
        began = time.monotonic()
        deadline = step_deadline(name)
        try:
            out["steps"][name] = summary = step(now, deadline)
            if summary.get("errors"):
                out["failed"].append(name)
        except SoftTimeLimitExceeded:
            raise  # the task's time is up, for the steps after this one too
        except Exception as exc:  # one step's bug or outage must not stop the others; logged and counted
            log.exception("minute pipeline at %s: step %s failed", out["now"], name)
            out["steps"][name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            out["failed"].append(name)
        out["seconds"][name] = round(time.monotonic() - began, 3)
        out["units"][name] = deadline.units
        out["last_unit_began_s"][name] = None if deadline.last_start is None else round(deadline.last_start, 3)
    log.info("minute pipeline at %s: %s", out["now"], ", ".join(
        f"{name} {seconds:.1f} s ({out['steps'][name].get('deferred', 0)} left)" for name, seconds in out["seconds"].items()))
    return out
