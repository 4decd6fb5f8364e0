"""The minute pipeline: materialize -> diagnose -> budgets -> alert rules, in that order, for one `now`.

Each step reads what the steps before it stored for the same minute: the diagnoses read the request buckets
just materialized, and the alert rules read the diagnoses and budget violations of the same recent window
(analysis.windows.recent_window(now)). Each step is also a task of its own app, for manual runs.

A failing step is logged and counted, and the steps after it still run on what is stored: a diagnosis a
minute older, buckets not yet refreshed. Where an input is missing, the alert kind that reads it keeps its
groups' state (budget_violation reads only windows the budgets step has evaluated; verdict, the latest
diagnosis). The next minute catches up: materialize resumes from its watermark, the others recompute the
window. This module sits above the apps: analysis, budgets and alerts never import it.
"""
import logging
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded

from alerts.rules import evaluate_all
from analysis.jobs import diagnose_recent, materialize_since_watermark
from budgets.evaluation import evaluate_recent

log = logging.getLogger(__name__)

STEPS = (
    ("materialize", materialize_since_watermark),
    ("diagnose", diagnose_recent),
    ("budgets", evaluate_recent),
    ("alert_rules", evaluate_all),
)


class PipelineError(Exception):
    """Some steps failed, each logged with its traceback: args are (which failed, the pipeline's summary)."""


def run(now: datetime) -> dict:
    """Run every step at `now`, in order, whatever failed before it. Returns {"now": ISO, "steps": {name: the
    step's summary, or {"error": "Type: message"}}, "failed": [names of the steps that raised]}."""
    out: dict = {"now": now.isoformat(), "steps": {}, "failed": []}
    for name, step in STEPS:
        try:
            out["steps"][name] = step(now)
        except SoftTimeLimitExceeded:
            raise  # the task's time is up, for the steps after this one too
        except Exception as exc:  # one step's bug or outage must not stop the others; logged and counted
            log.exception("minute pipeline at %s: step %s failed", out["now"], name)
            out["steps"][name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            out["failed"].append(name)
    return out
