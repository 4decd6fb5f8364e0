"""Hourly: send each enabled schedule whose local weekday and hour is now (schedule: latency_obs/celery.py)."""
from zoneinfo import ZoneInfo

from celery import shared_task

from analysis.tasks import TRANSIENT, _now
from reports import sending, weeks
from reports.models import ReviewSchedule, WeeklyReview


def due(now) -> list[tuple[ReviewSchedule, str]]:
    """(schedule, week to send) for schedules due at `now` whose last complete week is not built yet."""
    out = []
    for schedule in ReviewSchedule.objects.filter(enabled=True).select_related("project"):
        local = now.astimezone(ZoneInfo(schedule.timezone))
        week = weeks.last_complete(now, schedule.timezone)
        if (local.weekday(), local.hour) == (schedule.weekday, schedule.hour) and not WeeklyReview.objects.filter(
                project=schedule.project, week=week).exists():
            out.append((schedule, week))
    return out


@shared_task(acks_late=True, soft_time_limit=900, **TRANSIENT)
def send_due_weekly_reviews() -> list[str]:
    return [f"{s.project.name} {sending.send(s.project, week).week}" for s, week in due(_now())]
