from django.conf import settings
from django.http import JsonResponse

from ingest import quarantine
from ingest.pipeline import get_writer


def healthz(request):
    """Liveness plus the spool backlog and quarantine, so operators see ingest falling behind or refusing."""
    writer = get_writer()
    segments, size = writer.spool.backlog()
    held = quarantine.spans_by_project(settings.INGEST_SPOOL_DIR)
    status = 200 if not writer.last_error else 503
    return JsonResponse(
        {"ok": status == 200, "spool_segments": segments, "spool_bytes": size, "writer_error": writer.last_error,
         "quarantined_spans": sum(held.values())},
        status=status,
    )
