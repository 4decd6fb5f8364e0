"""The Celery app and the whole beat schedule (analysis jobs join it as they land)."""
import os

from celery import Celery

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
}
