"""Build, store (replacing) and announce one weekly review; shared by the command and the hourly task."""
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils.timezone import now as now_

from alerts.delivery import enqueue
from analysis.wording import fmt
from reports import build, weeks
from reports.models import ReviewSchedule, WeeklyReview


def review_url(review: WeeklyReview) -> str:
    path = reverse("review", args=[review.week]) + f"?project={review.project.name}"
    return getattr(settings, "PUBLIC_BASE_URL", "").rstrip("/") + path


def summary(review: WeeklyReview) -> dict:
    """The webhook payload summary: worst TTFT p95 change per service."""
    numbers = {}
    for s in review.data["services"]:
        p95 = s["percentiles"]["ttft"]["p95"]
        change = f" ({p95['change']:+.0%})" if p95["change"] is not None else ""
        numbers[f"{s['service']} TTFT p95"] = fmt(p95["this"], "ms") + (change if p95["this"] is not None else "")
    return {"title": f"Weekly latency review {review.week} ({review.project.name})", "verdict": "weekly_review",
            "numbers": numbers, "url": review_url(review),
            "context": f"{len(review.data['services'])} service(s) with traffic, vs {review.data['previous_week']}"}


def send(project, week: str | None = None, now=None) -> WeeklyReview:
    """Without a week: the last complete one at `now`, in the schedule's timezone (UTC without a schedule)."""
    schedule = ReviewSchedule.objects.filter(project=project).select_related("webhook").first()
    tz_name = schedule.timezone if schedule else "UTC"
    week = week or weeks.last_complete(now, tz_name)
    start, end = weeks.bounds(week, tz_name)
    data = build.build(project, week, tz_name)  # ClickHouse reads stay outside the transaction
    with transaction.atomic():
        review, _ = WeeklyReview.objects.update_or_create(
            project=project, week=week, defaults={"start": start, "end": end, "data": data, "created_at": now_()})
        if schedule and schedule.webhook and schedule.webhook.enabled:
            enqueue(schedule.webhook, "weekly_review", summary(review))
    return review
