"""Prometheus scrape targets: configured by staff in the admin (targets are internal addresses by nature)."""
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, URLValidator
from django.db import models

MIN_INTERVAL_SECONDS = 5


class ScrapeTarget(models.Model):
    """A Prometheus text endpoint (vLLM /metrics, DCGM exporter, kube-state-metrics...) the beat scrapes."""

    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="scrape_targets")
    service = models.CharField(max_length=256, help_text="service.name given to every series: the traces' service")
    instance = models.CharField(
        max_length=256, blank=True,
        help_text="service.instance.id given to every series (the join key with traces); blank: the URL's host:port")
    url = models.CharField(max_length=1024, validators=[URLValidator(schemes=["http", "https"])])
    interval_seconds = models.PositiveIntegerField(default=15, validators=[MinValueValidator(MIN_INTERVAL_SECONDS)])
    enabled = models.BooleanField(default=True)
    next_due_at = models.DateTimeField(null=True, blank=True)
    first_scraped_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_scraped_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_success_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.TextField(blank=True, editable=False)
    last_points = models.PositiveIntegerField(default=0, editable=False)
    last_duration_ms = models.PositiveIntegerField(null=True, blank=True, editable=False)

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(interval_seconds__gte=MIN_INTERVAL_SECONDS),
                                              name="scrape_interval_at_least_5s")]

    def __str__(self) -> str:
        return f"{self.service} <- {self.url}"

    def clean(self) -> None:
        if self.interval_seconds is not None and self.interval_seconds < MIN_INTERVAL_SECONDS:
            raise ValidationError({"interval_seconds": f"at least {MIN_INTERVAL_SECONDS} seconds"})

    @property
    def instance_id(self) -> str:
        """The instance the series join traces by: the override, else host:port of the URL."""
        from urllib.parse import urlparse

        return self.instance or urlparse(self.url).netloc
