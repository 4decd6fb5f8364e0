"""Latency budgets (a percentile target for total time and per stage) and the violations found per window."""
from django.core.validators import MinValueValidator
from django.db import models, transaction
from django.utils import timezone

from budgets.presets import PRESETS
from budgets.stages import PERCENTILES, STAGES, TOTAL
from projects.models import Project

STAGE_CHOICES = list(STAGES.items())


class Budget(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="budgets")
    service = models.CharField(max_length=256)
    route = models.CharField(max_length=256, blank=True, default="", help_text='"" = all routes')
    percentile = models.PositiveSmallIntegerField(default=95, choices=[(p, f"p{p}") for p in PERCENTILES])
    total_ms = models.FloatField(validators=[MinValueValidator(0)])
    name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    evaluated_until = models.DateTimeField(
        null=True, blank=True, editable=False,
        help_text="end of the latest recent window the minute job evaluated: its violations are stored up to here")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "service", "route"], name="one_budget_per_route")]

    def __str__(self):
        return f"{self.project}/{self.service}{self.route or ''} p{self.percentile} {self.total_ms:g} ms"

    @classmethod
    def from_preset(cls, project, service, route, preset_name) -> "Budget":
        """A new budget with the preset's percentile, total and stage targets (KeyError: unknown preset)."""
        preset = PRESETS[preset_name]
        with transaction.atomic():
            budget = cls.objects.create(project=project, service=service, route=route, name=preset_name,
                                        percentile=preset["percentile"], total_ms=preset["total_ms"])
            StageTarget.objects.bulk_create(StageTarget(budget=budget, stage=s, target_ms=ms)
                                            for s, ms in preset["stages"].items())
        return budget


class StageTarget(models.Model):
    budget = models.ForeignKey(Budget, on_delete=models.CASCADE, related_name="stages")
    stage = models.CharField(max_length=40, choices=STAGE_CHOICES)
    target_ms = models.FloatField(validators=[MinValueValidator(0)])

    class Meta:
        constraints = [models.UniqueConstraint(fields=["budget", "stage"], name="one_target_per_stage")]


class BudgetViolation(models.Model):
    """A stage (or "total") whose measured percentile exceeded its target in [start, end)."""

    budget = models.ForeignKey(Budget, on_delete=models.CASCADE, related_name="violations")
    start = models.DateTimeField()
    end = models.DateTimeField()
    stage = models.CharField(max_length=40, choices=[(TOTAL, "Total"), *STAGE_CHOICES])
    percentile = models.PositiveSmallIntegerField()
    measured_ms = models.FloatField()
    target_ms = models.FloatField()
    over_ms = models.FloatField()
    requests = models.PositiveIntegerField(help_text="requests with a value for this stage")
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["budget", "start", "end", "stage"],
                                               name="one_violation_per_window_stage")]
        indexes = [models.Index(fields=["budget", "-end"])]
