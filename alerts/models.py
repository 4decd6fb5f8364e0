"""Webhooks of a project and the log of what was sent to them (sending: alerts/delivery.py)."""
import secrets
import uuid

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from alerts.validation import validate_webhook_url
from analysis import buckets
from analysis.diagnosis.verdicts import REGISTRY
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
    """One notification to one webhook, and the outbox row it is sent from: while pending, whoever claims it
    once next_attempt_at is due (the immediate task or the beat's sweeper) makes one try (alerts/delivery.py)."""

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
    uuid = models.UUIDField("delivery id", default=uuid.uuid4, unique=True, editable=False,
                            help_text="sent as X-LatencyObs-Delivery and the JSON body's id; the same on every try")
    next_attempt_at = models.DateTimeField(default=timezone.now, help_text="when a pending delivery is due")
    claimed_until = models.DateTimeField(null=True, blank=True,
                                         help_text="lease of the sender trying it now; others wait until it ends")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["webhook", "-created_at"]),
                   # the sweeper's query: due pending deliveries, oldest first
                   models.Index(fields=["next_attempt_at"], condition=models.Q(status="pending"),
                                name="alerts_delivery_due_idx")]
        verbose_name_plural = "deliveries"

    def __str__(self):
        return f"{self.event} → {self.webhook.name}: {self.status}"


class AlertRule(models.Model):
    """A condition on one service's recent window, evaluated per group: each kind is a class in alerts/kinds.py."""

    BUDGET_VIOLATION, PERCENTILE, GAP_FRACTION = "budget_violation", "percentile", "gap_fraction"
    RETRY_RATE, TENANT_TAIL, VERDICT = "retry_rate", "tenant_tail", "verdict"
    INCIDENT = "incident"
    SLO_BURN = "slo_burn"
    KINDS = [(BUDGET_VIOLATION, "Budget violation"), (PERCENTILE, "Percentile above a threshold"),
             (GAP_FRACTION, "gap_fraction above x"), (RETRY_RATE, "Retry rate (extra attempts per run) above x"),
             (TENANT_TAIL, "A tenant's p95 (TTFT or total) above x ms"),
             (VERDICT, "Diagnosis verdict other than healthy"),
             (INCIDENT, "Incident opened / resolved"),
             (SLO_BURN, "SLO burn rate: 1 h and 5 min ≥ 14.4×, or 6 h and 30 min ≥ 6×")]
    GROUPS = [("service", "service"), ("route", "route"), ("tenant", "tenant")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="alert_rules")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=KINDS)
    service = models.CharField(max_length=256)
    route = models.CharField(max_length=256, blank=True, default="", help_text='"" = all routes')
    group_by = models.CharField(max_length=10, choices=GROUPS, default="service")
    budget = models.ForeignKey("budgets.Budget", on_delete=models.CASCADE, null=True, blank=True,
                               related_name="alert_rules",
                               help_text="budget_violation: blank = any budget of the service")
    slo = models.ForeignKey("slos.Slo", on_delete=models.CASCADE, null=True, blank=True, related_name="alert_rules",
                            verbose_name="SLO", help_text="slo_burn: blank = every SLO of the service")
    bucket = models.CharField(max_length=20, choices=[(b, b) for b in buckets.ALL], default="total",
                              help_text="percentile: any bucket; tenant_tail: ttft or total")
    percentile = models.PositiveSmallIntegerField(choices=[(p, f"p{p}") for p in (50, 90, 95, 99)], default=95)
    threshold = models.FloatField(default=0, help_text="ms (percentile, tenant_tail), a fraction (gap_fraction) "
                                                       "or extra attempts per run (retry_rate)")
    min_requests = models.PositiveIntegerField(default=20)
    for_seconds = models.PositiveIntegerField(default=120, help_text="breached this long before firing")
    renotify_seconds = models.PositiveIntegerField(default=0, help_text="0 = never re-notify while firing")
    min_duration_minutes = models.PositiveIntegerField(
        default=0, help_text="incident: an open one notifies once it has lasted this long; a shorter one never does")
    verdicts = models.CharField(max_length=400, blank=True, default="",
                                help_text="incident: only these verdicts, comma-separated; blank = any")
    webhooks = models.ManyToManyField(Webhook, blank=True, related_name="alert_rules")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_evaluated_at = models.DateTimeField(null=True, blank=True, editable=False,
                                             help_text="the minute job's latest evaluation (the longest waiting go first)")

    def __str__(self):
        return f"{self.name} ({self.kind}, {self.project}/{self.service})"

    def clean(self):
        # per-service measures: the scheduler queue (gap_fraction) and the stored diagnosis (verdict)
        if self.kind in (self.GAP_FRACTION, self.VERDICT, self.INCIDENT, self.SLO_BURN) and self.group_by != "service":
            raise ValidationError({"group_by": f"{self.kind} is measured per service"})
        if self.kind == self.TENANT_TAIL and self.bucket not in ("ttft", "total"):
            raise ValidationError({"bucket": "a tenant's tail is its ttft or total"})
        unknown = sorted(set(self.verdict_list()) - set(REGISTRY))
        if unknown:
            raise ValidationError({"verdicts": f"unknown verdict {', '.join(unknown)}: one of {', '.join(REGISTRY)}"})
        if self.budget_id and (self.budget.project_id != self.project_id or self.budget.service != self.service):
            raise ValidationError({"budget": "a budget of this rule's project and service"})
        if self.slo_id and (self.slo.project_id != self.project_id or self.slo.service != self.service):
            raise ValidationError({"slo": "an SLO of this rule's project and service"})


    def verdict_list(self) -> list[str]:
        """The incident kind's verdict filter as a list; [] = any verdict."""
        return [v.strip() for v in self.verdicts.split(",") if v.strip()]


class AlertState(models.Model):
    """Where one group of a rule stands; one row per (rule, group) so a re-run changes nothing twice."""

    OK, PENDING, FIRING = "ok", "pending", "firing"

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="states")
    group_key = models.CharField(max_length=256, blank=True, default="", help_text='route or tenant; "" = the service')
    state = models.CharField(max_length=10, choices=[(s, s) for s in (OK, PENDING, FIRING)], default=OK)
    since = models.DateTimeField(null=True, blank=True)
    last_value = models.JSONField(null=True, blank=True)
    last_notified_at = models.DateTimeField(null=True, blank=True)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rule", "group_key"], name="one_state_per_rule_group")]

    def __str__(self):
        return f"{self.rule.name} [{self.group_key or 'service'}]: {self.state}"
