"""What the periodic analysis jobs do (analysis/tasks.py wraps these for Celery).

Every minute: materialize the request buckets of the hours that received spans since the last
run, then diagnose each active service over the recent window (the first two steps of the minute
pipeline, latency_obs/pipeline.py). Every hour: diagnose the last full hour. Results replace earlier
ones for the same window, so a job may be rerun at will.
"""
from datetime import datetime, timedelta, timezone

from django.db import transaction

from analysis.diagnosis_service import run_diagnosis
from analysis.errors import AnalysisError
from analysis.materialize import materialize_dirty
from analysis.models import JobWatermark, WindowDiagnosis
from analysis.queries import active_services
from analysis.windows import last_full_hour, recent_window

# spans are fsynced before they are stored: look a little behind the watermark for late inserts
WATERMARK_OVERLAP = timedelta(minutes=2)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def materialize_since_watermark(now: datetime) -> dict:
    """Materialize the hours that got spans since the last run; returns the materialize summary."""
    with transaction.atomic():
        mark, _ = JobWatermark.objects.select_for_update().get_or_create(name="materialize", defaults={"at": EPOCH})
        summary = materialize_dirty(since=mark.at - WATERMARK_OVERLAP)
        mark.at = now
        mark.save(update_fields=["at"])
    return summary


def diagnose_window(project_id: int, service: str, start: datetime, end: datetime) -> WindowDiagnosis:
    """Diagnose one service over [start, end) and keep the result (replacing an earlier one)."""
    result = run_diagnosis(project_id, service, start, end)
    row, _ = WindowDiagnosis.objects.update_or_create(
        project_id=project_id, service=service, start=start, end=end,
        defaults={"verdict": result["verdict"], "result": result},
    )
    return row


def diagnose_active(start: datetime, end: datetime) -> dict:
    """Diagnose every service with traffic in [start, end); returns {verdict: count}."""
    verdicts: dict[str, int] = {}
    for project_id, service in active_services(start, end):
        try:
            verdict = diagnose_window(project_id, service, start, end).verdict
        except AnalysisError as exc:  # e.g. the window's traffic vanished with retention: nothing to keep
            verdict = exc.reason
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return verdicts


def diagnose_recent(now: datetime) -> dict:
    """The minute job: every active service over the recent window ending at `now`'s minute.
    Returns {"window": [start, end] (ISO), "verdicts": {verdict: count}}."""
    return _diagnose_over(*recent_window(now))


def diagnose_last_hour(now: datetime) -> dict:
    """The hourly rollup: every active service over the last full hour before `now`; as diagnose_recent."""
    return _diagnose_over(*last_full_hour(now))


def _diagnose_over(start: datetime, end: datetime) -> dict:
    return {"window": [start.isoformat(), end.isoformat()], "verdicts": diagnose_active(start, end)}
