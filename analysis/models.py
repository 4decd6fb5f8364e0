"""Configuration and stored results of the analysis (spans and buckets themselves live in ClickHouse)."""
from django.db import models
from django.utils import timezone

from projects.models import Project


class ServiceCost(models.Model):
    """C_hour of a service: what its time-billed inference capacity costs per hour (for cost_per_success)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="service_costs")
    service = models.CharField(max_length=256)
    cost_per_hour_usd = models.DecimalField(max_digits=12, decimal_places=4)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "service"], name="one_cost_per_service")]

    def __str__(self):
        return f"{self.project}/{self.service}: ${self.cost_per_hour_usd}/h"


class JobWatermark(models.Model):
    """Up to when a periodic job has seen its input, so a missed run is caught up, not skipped."""

    name = models.CharField(max_length=100, unique=True)
    at = models.DateTimeField(default=timezone.now)


class WindowDiagnosis(models.Model):
    """A diagnosis of one service over one window, kept for the UI and alerts; recomputing replaces it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="diagnoses")
    service = models.CharField(max_length=256)
    start = models.DateTimeField()
    end = models.DateTimeField()
    verdict = models.CharField(max_length=40)
    result = models.JSONField()
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "service", "start", "end"], name="one_diagnosis_per_window")]
        indexes = [models.Index(fields=["project", "service", "-end"])]


class DirtyHour(models.Model):
    """An hour of a project's attempts whose request_buckets rows are stale: queued when the materialize step
    finds spans ingested for it, deleted once materialized (analysis/work/backlog.py). What a run leaves for lack of
    time stays queued, and its project, having waited longest, is served first by the next run."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    hour = models.DateTimeField()
    queued_at = models.DateTimeField(help_text="the run that found it first (the pipeline's `now`)")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "hour"], name="one_dirty_hour")]


class UnaggregatedHour(models.Model):
    """An hour of a project materialized before it settled (ended SETTLE ago): its aggregates wait for the
    minute job's first run after it settles (analysis/rollups/aggregates.py), so the hour still taking spans costs none."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    hour = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "hour"], name="one_unaggregated_hour")]


class JudgeWork(models.Model):
    """Minutes of one service with traffic that the incidents step has not judged yet: [start, end), queued when
    the step finds spans ingested for them (analysis/incidents/queue.py), widened when more come before it is
    done, deleted once judged. Durable: a service that stops sending is judged all the same, and what a minute's
    budget leaves waits here. `version` changes with every widening, so a unit that judged an older stretch does
    not delete minutes queued meanwhile."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    service = models.CharField(max_length=256)
    start = models.DateTimeField(help_text="the first minute with traffic not yet judged")
    end = models.DateTimeField(help_text="the end of the last such minute")
    queued_at = models.DateTimeField(help_text="the run that queued it first; it keeps its place while it waits")
    ingested_until = models.DateTimeField(null=True, blank=True,
                                          help_text="its newest span's ingested_at: its hours are judged once "
                                                    "materialized after it")
    version = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0, help_text="judging it raised this many times in a row")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "service"], name="one_judge_work")]
        indexes = [models.Index(fields=["queued_at", "id"])]


class NoBaselineStretch(models.Model):
    """Judged minutes of a service (with enough attempts) that had no baseline to be judged against: the
    incidents API's `no_baseline`, with the reason. Rewritten for the minutes each judgement covers."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    service = models.CharField(max_length=256)
    start = models.DateTimeField()
    end = models.DateTimeField()
    minutes = models.PositiveIntegerField()
    reason = models.CharField(max_length=300)

    class Meta:
        indexes = [models.Index(fields=["project", "service", "start"])]


class PendingDiagnosis(models.Model):
    """A service with spans the minute diagnosis has not read yet: queued when the diagnose step finds new spans
    of it, deleted once diagnosed, or once its newest spans have left the recent window (analysis/work/backlog.py)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    service = models.CharField(max_length=256)
    queued_at = models.DateTimeField(help_text="the run that found it first; it keeps its place while it waits")
    seen_at = models.DateTimeField(help_text="the latest run that found new spans of it")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "service"], name="one_pending_diagnosis")]
        verbose_name_plural = "pending diagnoses"


class Incident(models.Model):
    """A stretch where a service's latency left its own baseline (analysis/incidents/): onset and end to the minute,
    the flowchart's verdict on the incident's window, the causes and scope of the excess, baseline and peak.

    Re-detection (late or backfilled spans) reconciles the incidents of the minutes it re-reads with what it finds:
    an incident keeps its id and URL for life (analysis/incidents/records.py), one merged into another or no longer
    found leaves a RetiredIncident. `end` is None while it is open (the service is not back at its baseline)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="incidents")
    service = models.CharField(max_length=256)
    route = models.CharField(max_length=512, blank=True, default="", help_text="'' for a service-wide detection")
    start = models.DateTimeField(help_text="onset: the first minute off the baseline")
    end = models.DateTimeField(null=True, blank=True, help_text="the first minute back at baseline; None while open")
    verdict = models.CharField(max_length=40)
    causes = models.JSONField(default=list, help_text='[{"code", "share"}], largest share first')
    scope = models.JSONField(default=list, help_text='[{"dimension", "value", "share"}]; [] when service-wide')
    baseline = models.JSONField(default=dict, help_text='{"start", "end", "buckets", "ttft", "total"}')
    peak = models.JSONField(default=dict, help_text='{"buckets", "ttft", "total"}')
    path = models.JSONField(default=list, help_text="the flowchart path with baseline comparisons")
    detail = models.JSONField(default=dict, help_text="what departed (metrics, per-minute series), findings, fixes")
    revisions = models.JSONField(default=list, help_text='[{"at", "what", "text", ...}]: how re-detection changed it')
    detected_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["project", "service", "start"]), models.Index(fields=["project", "end"])]

    def __str__(self):
        return f"{self.service} {self.verdict} from {self.start:%Y-%m-%d %H:%M}"

    @property
    def is_open(self) -> bool:
        return self.end is None


class RetiredIncident(models.Model):
    """An incident id that re-detection retired: merged into a surviving incident (`merged_into`), or no longer found
    (`reason`). Its links keep answering: a redirect to the survivor, or 410 with what happened; ids are never reused
    (the survivor keeps the oldest)."""

    MERGED, NOT_FOUND, NO_CAUSE = "merged", "not_found", "no_cause"
    id = models.BigIntegerField(primary_key=True, help_text="the incident's id")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    service = models.CharField(max_length=256)
    route = models.CharField(max_length=512, blank=True, default="")
    start = models.DateTimeField()
    end = models.DateTimeField(null=True, blank=True)
    verdict = models.CharField(max_length=40)
    reason = models.CharField(max_length=20, choices=[(MERGED, "merged"), (NOT_FOUND, "not found"), (NO_CAUSE, "no cause")])
    merged_into = models.BigIntegerField(null=True, blank=True, help_text="the surviving incident's id")
    message = models.TextField()
    retired_at = models.DateTimeField(default=timezone.now)
