from django.http import JsonResponse

from ingest.pipeline import get_writer


def healthz(request):
    """Liveness plus the spool backlog, so operators see ingest falling behind."""
    writer = get_writer()
    segments, size = writer.spool.backlog()
    status = 200 if not writer.last_error else 503
    return JsonResponse(
        {"ok": status == 200, "spool_segments": segments, "spool_bytes": size, "writer_error": writer.last_error},
        status=status,
    )
