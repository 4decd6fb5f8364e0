"""The Celery app and the whole beat schedule (expiries about one interval long)."""
import os

from celery import Celery
from celery.schedules import crontab

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "latency_obs.settings")

app = Celery("latency_obs")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

app.conf.beat_schedule = {
    "check-ingest-spool": {
        "task": "ingest.tasks.report_spool_backlog",
        "schedule": 60.0,
        "options": {"expires": 60},
    },
    # Prometheus scrape targets (ingest.models.ScrapeTarget): each at its own interval (>= 5 s)
    "scrape-prometheus-targets": {
        "task": "ingest.tasks.scrape_due",
        "schedule": 5.0,
        "options": {"expires": 5},
    },
    # every minute, one chain at one `now`: materialize the hours that got spans, diagnose the services that got
    # spans over the recent window, evaluate the budgets over it, then the alert rules, which read those
    # diagnoses and budget violations (latency_obs/pipeline.py). Each step has a time budget, so the run ends
    # within the minute even on the embedded mode's one worker thread. Each step is also its own task.
    "run-minute-pipeline": {
        "task": "latency_obs.tasks.run_minute_pipeline",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    # the rollup: the last full hour of every active service, at most ROLLUP_BUDGET_SECONDS a run; every 5
    # minutes, each run going on with the services the last one left (projects in turns)
    "rollup-last-hour": {
        "task": "analysis.tasks.rollup_last_hour",
        "schedule": crontab(minute="2-59/5"),
        "options": {"expires": 290},
    },
    # the webhook outbox: due deliveries and retries, also those created by processes without a worker
    "send-due-deliveries": {
        "task": "alerts.tasks.send_due_deliveries",
        "schedule": 15.0,
        "options": {"expires": 15},
    },
    # weekly reviews: hourly, each schedule fires at its own local weekday/hour
    "send-due-weekly-reviews": {
        "task": "reports.tasks.send_due_weekly_reviews",
        "schedule": crontab(minute=5),
        "options": {"expires": 3000},
    },
}
