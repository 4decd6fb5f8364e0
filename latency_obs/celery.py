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
    # recent windows every minute: buckets of the hours that got spans, then the services' diagnoses
    "materialize-request-buckets": {
        "task": "analysis.tasks.materialize_request_buckets",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    "diagnose-recent-windows": {
        "task": "analysis.tasks.diagnose_recent_windows",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    # latency budgets over the same recent window: which stage overspent
    "evaluate-recent-budgets": {
        "task": "budgets.tasks.evaluate_recent_budgets",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    # hourly rollup: the last full hour of every active service
    "rollup-last-hour": {
        "task": "analysis.tasks.rollup_last_hour",
        "schedule": crontab(minute=2),
        "options": {"expires": 3000},
    },
    # alert rules over the same recent window: state changes and their webhook notifications
    "evaluate-alert-rules": {
        "task": "alerts.tasks.evaluate_alert_rules",
        "schedule": 60.0,
        "options": {"expires": 55},
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
