"""Service level objectives: "99 % of chat-gateway's requests get their first token in under 1 s, over 28 days".

An SLO is a promise over a rolling window with an error budget (the requests allowed to miss it), where a latency
budget (budgets/) is a percentile target judged per 15-minute window. What an SLO stands at is read from the store
by analysis/reads/slos.py; this module only holds the promise.
"""
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from analysis.wording import fmt
from projects.models import Project

TTFT, TOTAL = "ttft", "total"
SIGNALS = [(TTFT, "TTFT (first token)"), (TOTAL, "total (whole response)")]
WINDOW_DAYS = (7, 28, 30)


class Slo(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="slos")
    service = models.CharField(max_length=256)
    route = models.CharField(max_length=256, blank=True, default="", help_text='"" = all routes')
    tenant = models.CharField(max_length=256, blank=True, default="", help_text='"" = all tenants')
    signal = models.CharField(max_length=10, choices=SIGNALS, default=TTFT)
    threshold_ms = models.FloatField(validators=[MinValueValidator(0.001)],
                                     help_text="a request is good when its signal is under this, in ms")
    objective = models.FloatField(validators=[MinValueValidator(0.5), MaxValueValidator(0.99999)],
                                  help_text="the share of requests that must be good, e.g. 0.99")
    window_days = models.PositiveSmallIntegerField(choices=[(d, f"{d} days") for d in WINDOW_DAYS], default=28)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(
            fields=["project", "service", "route", "tenant", "signal", "threshold_ms", "objective", "window_days"],
            name="one_slo_per_promise")]
        verbose_name = "SLO"

    def __str__(self):
        return f"{self.project}/{self.description}"

    @property
    def description(self) -> str:
        """The promise as people say it: "chat-gateway /v1/chat: 99% TTFT < 1 s (28 days)"."""
        where = " ".join(x for x in (self.service, self.route, f"tenant={self.tenant}" if self.tenant else "") if x)
        return (f"{where}: {fmt(self.objective, 'nines')} {'TTFT' if self.signal == TTFT else 'total'} "
                f"< {fmt(self.threshold_ms, 'ms')} ({self.window_days} days)")

    def clean(self):
        # 1 would leave no error budget to burn: every burn rate would divide by zero
        if self.objective is not None and not 0 < self.objective < 1:
            raise ValidationError({"objective": "a share between 0 and 1, e.g. 0.99"})
