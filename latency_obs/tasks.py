"""The minute pipeline's task (latency_obs/pipeline.py); its beat entry is in latency_obs/celery.py."""
from celery import shared_task

from analysis.tasks import instant
from latency_obs import pipeline


# no retries: every step is idempotent and the next minute's run catches up. The steps' time budgets keep a run
# under the minute (PIPELINE_STEP_BUDGET_SECONDS); the limit is the backstop for a unit that hangs past its
# step's budget. A run that outlasts the minute only delays the next, whose message expires meanwhile.
@shared_task(acks_late=True, soft_time_limit=120)
def run_minute_pipeline(now: str | None = None) -> dict:
    """Materialize, diagnose, budgets and alert rules at one `now` (ISO 8601, default the clock); returns the
    pipeline's summary, or fails with PipelineError naming the failed steps once all have run."""
    summary = pipeline.run(instant(now))
    if summary["failed"]:
        # loud: a run with a broken step must not look healthy
        raise pipeline.PipelineError(f"{', '.join(summary['failed'])} failed at {summary['now']}", summary)
    return summary
