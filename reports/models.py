"""Weekly latency reviews (stored, one per project and ISO week) and when to send them."""
from django.db import models
from django.utils import timezone

from projects.models import Project


class WeeklyReview(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="weekly_reviews")
    week = models.CharField(max_length=8, help_text='ISO week, "YYYY-Www"')
    start = models.DateTimeField(help_text="Monday 00:00 in the schedule's timezone (stored UTC)")
    end = models.DateTimeField()
    data = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "week"], name="one_review_per_week")]
        ordering = ["-start"]

    def __str__(self):
        return f"{self.project} {self.week}"


class ReviewSchedule(models.Model):
    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="review_schedule")
    weekday = models.PositiveSmallIntegerField(default=0, help_text="0 = Monday … 6 = Sunday")
    hour = models.PositiveSmallIntegerField(default=9)
    timezone = models.CharField(max_length=64, default="UTC", help_text="IANA name (zoneinfo)")
    enabled = models.BooleanField(default=True)
    webhook = models.ForeignKey("alerts.Webhook", on_delete=models.SET_NULL, null=True, blank=True)

    def __str__(self):
        return f"{self.project}: weekday {self.weekday} {self.hour:02d}:00 {self.timezone}"
