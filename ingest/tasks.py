import logging

from celery import shared_task

from ingest.pipeline import get_writer

log = logging.getLogger(__name__)


@shared_task(ignore_result=True, expires=60)
def report_spool_backlog() -> dict:
    """Log how much waits in this process's spool; a growing figure means ClickHouse is behind."""
    segments, size = get_writer().spool.backlog()
    if segments > 2:
        log.warning("ingest spool backlog: %d segments, %d bytes", segments, size)
    return {"segments": segments, "bytes": size}


@shared_task(ignore_result=True, expires=5, soft_time_limit=30)
def scrape_due() -> dict:
    """Scrape the Prometheus targets that are due (ingest.scrape)."""
    from ingest import scrape

    return scrape.scrape_due()
