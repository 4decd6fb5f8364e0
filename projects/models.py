"""Projects own services, tenants and API keys; users see only the projects they belong to."""
import hashlib
import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

SCOPES = ("ingest", "read")
KEY_PREFIX = "lo_"


class Project(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="projects", blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Ingest limits of this project (ingest/limits.py); blank = the default from the settings.
    ingest_spans_per_second = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="ingest spans per second",
        help_text="Spans per second this project may send, per receiving process, with a burst of "
                  "INGEST_PROJECT_BURST_SECONDS times this; more is answered 429. 0 = unlimited; "
                  "blank = INGEST_PROJECT_SPANS_PER_SECOND. Takes effect within 5 seconds.")
    ingest_spool_share = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0.01), MaxValueValidator(1.0)],
        verbose_name="ingest spool share",
        help_text="Share of the spool (INGEST_SPOOL_MAX_BYTES) this project's unwritten spans may fill, "
                  "0.01-1.0; past it, 429 spool_quota. 1.0 = no per-project limit; "
                  "blank = INGEST_PROJECT_SPOOL_SHARE. Takes effect within 5 seconds.")
    # Cardinality guards (ingest/cardinality.py): distinct values per hour, the rest stored as __other__.
    ingest_max_services_per_hour = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="max services per hour",
        help_text="Distinct service.name values per hour; spans of further services are stored as __other__. "
                  "0 = unlimited; blank = INGEST_MAX_SERVICES_PER_HOUR.")
    ingest_max_routes_per_hour = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="max routes per hour",
        help_text="Distinct routes per hour; further routes are stored as __other__. "
                  "0 = unlimited; blank = INGEST_MAX_ROUTES_PER_HOUR.")
    ingest_max_tenants_per_hour = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="max tenants per hour",
        help_text="Distinct tenant.id values per hour; further tenants are stored as __other__. "
                  "0 = unlimited; blank = INGEST_MAX_TENANTS_PER_HOUR.")
    ingest_max_instances_per_hour = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="max instances per hour",
        help_text="Distinct service.instance.id values per hour; further instances are stored as __other__. "
                  "0 = unlimited; blank = INGEST_MAX_INSTANCES_PER_HOUR.")

    def __str__(self):
        return self.name


def hash_key(raw: str) -> str:
    # Keys are 256-bit random tokens, so a fast hash is enough (no password stretching needed).
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiKey(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, help_text="first characters, to recognise a key")
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = models.CharField(max_length=100, default="ingest")
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.prefix}… ({self.project}, {self.scopes})"

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(s for s in self.scopes.split(",") if s)

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @classmethod
    def issue(cls, project: Project, scopes: list[str], name: str = "") -> tuple["ApiKey", str]:
        """Create a key; returns (row, raw key). The raw key is never stored: show it once."""
        unknown = set(scopes) - set(SCOPES)
        if unknown or not scopes:
            raise ValueError(f"scopes must be a non-empty subset of {', '.join(SCOPES)}; got {', '.join(scopes)}")
        raw = KEY_PREFIX + secrets.token_urlsafe(32)
        key = cls.objects.create(
            project=project, name=name, prefix=raw[:10], key_hash=hash_key(raw), scopes=",".join(sorted(set(scopes)))
        )
        return key, raw

    def revoke(self) -> None:
        self.revoked_at = timezone.now()
        self.save(update_fields=["revoked_at"])
