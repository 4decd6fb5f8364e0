"""Webhooks of a project and the log of what was sent to them (sending: alerts/delivery.py)."""
import secrets

from django.db import models
from django.utils import timezone

from alerts.validation import validate_webhook_url
from projects.models import Project


class Webhook(models.Model):
    SLACK = "slack"
    JSON = "json"
    KINDS = [(SLACK, "Slack incoming webhook"), (JSON, "JSON, signed with HMAC-SHA256")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=KINDS, default=SLACK)
    url = models.CharField(max_length=2000, validators=[validate_webhook_url])
    secret = models.CharField(max_length=100, blank=True, help_text="HMAC key of JSON webhooks; generated when blank")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.name} ({self.kind}, {self.project})"

    def save(self, *args, **kwargs):
        if self.kind == self.JSON and not self.secret:
            self.secret = secrets.token_urlsafe(32)
        super().save(*args, **kwargs)


class Delivery(models.Model):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"
    STATUSES = [(PENDING, PENDING), (SENT, SENT), (FAILED, FAILED)]

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=50, help_text="alert.firing, alert.resolved, test, weekly_review, …")
    payload = models.JSONField(help_text="the summary; rendered as Slack blocks or the JSON body at send time")
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["webhook", "-created_at"])]
        verbose_name_plural = "deliveries"

    def __str__(self):
        return f"{self.event} → {self.webhook.name}: {self.status}"
