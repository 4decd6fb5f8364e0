"""The beat's Prometheus scraper: fetch each due target, convert (ingest.prometheus), spool like any export.

One bad target never stops the others: its error is kept on its row (shown in the admin) and it is tried
again at its next interval.
"""
import logging
import time
from datetime import timedelta

import requests
from django.db.models import F, Q
from django.utils import timezone

from ingest import metrics, prometheus
from ingest.models import ScrapeTarget

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 10 * 1024 * 1024
MAX_TIMEOUT_SECONDS = 10.0
ACCEPT = "text/plain;version=0.0.4;q=0.9,*/*;q=0.1"


def scrape_due(now=None, limit: int = 50) -> dict:
    """Scrape the enabled targets that are due, longest waiting first; returns counts."""
    now = now or timezone.now()
    due = (ScrapeTarget.objects.filter(enabled=True).filter(Q(next_due_at__isnull=True) | Q(next_due_at__lte=now))
           .order_by(F("next_due_at").asc(nulls_first=True))[:limit])
    done = failed = 0
    for target in due:
        ok = scrape(target, now)
        done, failed = done + ok, failed + (not ok)
    return {"scraped": done, "failed": failed}


def scrape(target: ScrapeTarget, now=None) -> bool:
    """Fetch, convert and spool one target; records the outcome on its row. True when it was stored."""
    now = now or timezone.now()
    started = time.monotonic()
    target.first_scraped_at = target.first_scraped_at or now
    try:
        points = _fetch_and_store(target, now)
        target.last_success_at, target.last_error, target.last_points = now, "", points
    except Exception as exc:  # noqa: BLE001 -- whatever went wrong belongs to this target's row, not the beat
        target.last_error = f"{type(exc).__name__}: {exc}"[:2000]
        log.warning("scrape of %s failed: %s", target.url, target.last_error)
    target.last_scraped_at = now
    target.last_duration_ms = int((time.monotonic() - started) * 1000)
    target.next_due_at = now + timedelta(seconds=target.interval_seconds)
    target.save()
    return not target.last_error


def _fetch_and_store(target: ScrapeTarget, now) -> int:
    timeout = min(float(target.interval_seconds), MAX_TIMEOUT_SECONDS)
    with requests.get(target.url, timeout=timeout, stream=True, headers={"Accept": ACCEPT}) as response:
        response.raise_for_status()
        body = response.raw.read(MAX_BODY_BYTES + 1, decode_content=True)
    if len(body) > MAX_BODY_BYTES:
        raise ValueError(f"the exposition is larger than {MAX_BODY_BYTES} bytes")
    resource = {"service.name": target.service, "service.instance.id": target.instance_id,
                "latency_obs.scrape_url": target.url}
    now_ns = int(now.timestamp() * 1e9)
    request, points = prometheus.to_request(body.decode("utf-8", errors="replace"), resource, now_ns,
                                            int(target.first_scraped_at.timestamp() * 1e9))
    decoded = metrics.spool_metrics(target.project_id, request.SerializeToString())
    if decoded.rejected_count:
        log.info("scrape of %s: %s", target.url, decoded.message())
    return decoded.accepted


def targets_of(project_id: int, service: str) -> list[ScrapeTarget]:
    """The project's scrape targets of a service, for the Engine page (their last error included)."""
    return list(ScrapeTarget.objects.filter(project_id=project_id, service=service).order_by("url"))
