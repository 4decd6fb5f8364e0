"""Fair ingest: per-project limits, so that one project's flood cannot crowd out the others.

- **Spans per second**: a token bucket per project, holding up to rate x INGEST_PROJECT_BURST_SECONDS
  spans. TRICKY: the buckets live in this process. Each receiving process (the web server for OTLP/HTTP,
  `serve_otlp_grpc` for OTLP/gRPC) enforces the limit on the traffic it receives itself, so a project that
  sends to both may get up to twice its rate. Sharing buckets would cost a round trip per request.
- **Spool share**: how much of INGEST_SPOOL_MAX_BYTES one project's not yet written spans may fill. The
  spool enforces it (it counts bytes per project) and reads the share from `spool_share`.
- **Distinct services, routes, tenants, instances per hour**: read here, enforced by ingest/cardinality.py,
  which stores the values past them as __other__ instead of refusing anything.

A project over a limit gets OverLimit (HTTP 429, gRPC RESOURCE_EXHAUSTED, with Retry-After / RetryInfo);
the refused spans are counted for its ingest status. The limits come from the Project row (blank = the
default from the settings) and are cached for CACHE_SECONDS, so ingest does not ask the database per request:
an admin change is seen within that time (at once in the process that saved it).
"""
import math
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from django.conf import settings
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from projects.models import Project
from store.errors import ReasonError
from store.reasons import Reason

CACHE_SECONDS = 5.0  # as the key cache (projects/keys.py)
REASONS = (Reason.RATE_LIMITED, Reason.SPOOL_QUOTA)
DIMENSIONS = ("services", "routes", "tenants", "instances")  # the cardinality guards' limits, per hour
LIMIT_FIELDS = ("ingest_spans_per_second", "ingest_spool_share", *(f"ingest_max_{d}_per_hour" for d in DIMENSIONS))


class OverLimit(ReasonError):
    """A request refused because its project is over a limit; the client should retry after `retry_after`.

    `reason` is rate_limited (spans per second) or spool_quota (spool share); `retry_after` whole seconds, >= 1.
    """

    def __init__(self, reason: Reason, message: str, retry_after: float = 1):
        super().__init__(reason, message)
        self.retry_after = max(1, math.ceil(retry_after))

    def headers(self) -> dict[str, str]:
        # OTLP exporters retry 429 after Retry-After, and give up when it is past their own timeout
        return {"Retry-After": str(self.retry_after)}


@dataclass(frozen=True)
class Limits:
    """A project's effective limits (its overrides, else the settings)."""

    spans_per_second: int  # 0 = unlimited
    burst_spans: int  # the bucket's size; 0 when unlimited
    spool_share: float  # of INGEST_SPOOL_MAX_BYTES; 1.0 = no per-project limit
    # distinct values per hour before the rest is stored as __other__ (ingest/cardinality.py); 0 = no limit
    services_per_hour: int = 0
    routes_per_hour: int = 0
    tenants_per_hour: int = 0
    instances_per_hour: int = 0

    def as_dict(self) -> dict:
        return {"spans_per_second": self.spans_per_second, "burst_spans": self.burst_spans,
                "spool_share": self.spool_share,
                "spool_max_bytes": int(self.spool_share * settings.INGEST_SPOOL_MAX_BYTES)}


def limits_for(rate: int | None, share: float | None, *per_hour: int | None) -> Limits:
    """Limits from a project's overrides (None = the default from the settings): spans per second, spool
    share, then distinct services, routes, tenants and instances per hour."""
    rate = settings.INGEST_PROJECT_SPANS_PER_SECOND if rate is None else max(0, rate)
    share = settings.INGEST_PROJECT_SPOOL_SHARE if share is None else min(1.0, max(0.01, share))
    burst = max(1, round(rate * settings.INGEST_PROJECT_BURST_SECONDS)) if rate else 0
    per_hour += (None,) * len(DIMENSIONS)  # zip stops at the last dimension
    hourly = {f"{d}_per_hour": getattr(settings, f"INGEST_MAX_{d.upper()}_PER_HOUR") if n is None else max(0, n)
              for d, n in zip(DIMENSIONS, per_hour)}
    return Limits(rate, burst, share, **hourly)


class State:
    """This process's buckets, cached limits and refusal counters; `clock` (monotonic seconds) is injectable."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.lock = threading.Lock()
        self.buckets: dict[int, list[float]] = {}  # project id -> [tokens, refilled at]
        self.cached: dict[int, tuple[float, Limits]] = {}  # project id -> (read at, limits)
        self.refused: dict[int, dict] = {}  # project id -> {reason: spans, "last_refused_at": iso}
        self.since = datetime.now(timezone.utc)

    def limits(self, project_id: int) -> Limits:
        now = self.clock()
        with self.lock:
            hit = self.cached.get(project_id)
        if hit and now - hit[0] < CACHE_SECONDS:
            return hit[1]
        row = Project.objects.filter(pk=project_id).values_list(*LIMIT_FIELDS).first()
        current = limits_for(*(row or (None,) * len(LIMIT_FIELDS)))
        with self.lock:
            self.cached[project_id] = (now, current)
        return current

    def take(self, project_id: int, spans: int, limits: Limits) -> float:
        """Take `spans` tokens from the project's bucket: 0 when admitted, else the seconds until they would be.

        TRICKY: a request needs min(spans, burst) tokens, then all its spans are taken, so the bucket can go
        below zero. A request larger than the burst is thus admitted when the bucket is full, and the debt
        holds the project's next requests back until the average is back at the rate.
        """
        rate, burst = limits.spans_per_second, limits.burst_spans
        now = self.clock()
        with self.lock:
            tokens, at = self.buckets.get(project_id, (burst, now))
            tokens = min(burst, tokens + (now - at) * rate)
            need = min(spans, burst)
            if tokens < need:
                self.buckets[project_id] = [tokens, now]
                return (need - tokens) / rate
            self.buckets[project_id] = [tokens - spans, now]
            return 0.0

    def count(self, project_id: int, reason: str, spans: int) -> None:
        with self.lock:
            counts = self.refused.setdefault(project_id, {r: 0 for r in REASONS})
            counts[reason] = counts.get(reason, 0) + spans
            counts["last_refused_at"] = datetime.now(timezone.utc).isoformat()


state = State()


def _project_id(project) -> int:
    """A project id from an id, a Project or a KeyInfo."""
    if isinstance(project, int):
        return project
    return project.project_id if hasattr(project, "project_id") else project.pk


def project_limits(project) -> Limits:
    """The project's effective limits, read at most every CACHE_SECONDS."""
    return state.limits(_project_id(project))


def check_rate(project, spans: int) -> None:
    """Admit `spans` spans of the project or raise OverLimit(Reason.RATE_LIMITED) with the seconds to wait.

    An unlimited project (spans_per_second 0) is always admitted. Refused spans are counted (count_refused).
    """
    project_id = _project_id(project)
    limits = state.limits(project_id)
    if not limits.spans_per_second or spans <= 0:
        return
    wait = state.take(project_id, spans, limits)
    if wait:
        count_refused(project_id, "rate_limited", spans)
        raise OverLimit(Reason.RATE_LIMITED, f"project over its limit of {limits.spans_per_second} spans per second "
                        f"(bursts up to {limits.burst_spans}); retry in {math.ceil(wait)} s", retry_after=wait)


def spool_share(project) -> float:
    """The share of INGEST_SPOOL_MAX_BYTES the project may fill, 0.01-1.0 (1.0: no per-project limit)."""
    return state.limits(_project_id(project)).spool_share


def spool_quota(project_id: int) -> int | None:
    """Bytes of the spool the project may fill; None when its share is the whole spool."""
    share = spool_share(project_id)
    return None if share >= 1.0 else int(share * settings.INGEST_SPOOL_MAX_BYTES)


def count_refused(project_id: int, reason: str, spans: int) -> None:
    """Count `spans` spans refused for the project (reason rate_limited or spool_quota) in this process."""
    state.count(project_id, reason, spans)


def refused(project_id: int) -> dict:
    """{"rate_limited": spans, "spool_quota": spans, "since": iso, "last_refused_at": iso or None}: spans
    refused for the project by this process since it started."""
    with state.lock:
        counts = dict(state.refused.get(project_id, {}))
    return {**{r: counts.get(r, 0) for r in REASONS}, "since": state.since.isoformat(),
            "last_refused_at": counts.get("last_refused_at")}


@receiver(post_save, sender=Project)
@receiver(post_delete, sender=Project)
def _forget(sender, instance, **kwargs):
    with state.lock:
        state.cached.pop(instance.pk, None)
