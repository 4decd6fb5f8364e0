"""OTLP/HTTP trace receiver: POST /v1/traces, protobuf or JSON, answered in the request's encoding."""
import logging

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from ingest import limits, quarantine, queries, responses
from ingest.errors import IngestError
from ingest.pipeline import OverLimit, SpoolFull, export
from store.client import TIMEOUT_EXCEEDED, ClickHouseError
from projects.keys import KeyError_, authorize

log = logging.getLogger(__name__)
CONTENT_TYPES = {"application/x-protobuf": "protobuf", "application/protobuf": "protobuf", "application/json": "json"}


@csrf_exempt
@require_POST
def traces(request) -> HttpResponse:
    encoding = CONTENT_TYPES.get(request.content_type or "")
    if encoding is None:
        return responses.error(415, "unsupported_media_type", "Content-Type must be application/x-protobuf or application/json", "json")
    try:
        raw = _read_limited(request, settings.INGEST_MAX_BODY_BYTES)
        decoded = export(request.headers.get("Authorization"), responses.body(raw, request.headers), encoding)
    except KeyError_ as exc:
        return responses.error(exc.status, exc.reason, str(exc), encoding)
    except IngestError as exc:
        return responses.error(exc.status, exc.reason, exc.message, encoding)
    except OverLimit as exc:
        return responses.over_limit(exc, encoding)
    except SpoolFull:
        return responses.throttled(encoding)
    return responses.success(decoded, encoding)


def _read_limited(request, limit: int) -> bytes:
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:  # unreadable: Django's request stream then holds no body, as if it were 0
        declared = 0
    if declared > limit:
        raise IngestError("body_too_large", f"request body exceeds {limit} bytes", status=413)
    return request.read(limit + 1)


@require_GET
def status(request) -> JsonResponse:
    """What a project has stored, its ingest limits and the spans this process refused for it recently."""
    try:
        key = authorize(request.headers.get("Authorization"), "read")
        stored = queries.ingest_status(key.project_id)
    except KeyError_ as exc:
        return JsonResponse({"error": exc.reason, "message": str(exc)}, status=exc.status)
    except ClickHouseError as exc:  # slow or down: a 503 the sender may retry, the details in the log
        log.warning("ingest status of project %s failed: %s", key.project_id, exc)
        reason = "query_timeout" if exc.code == TIMEOUT_EXCEEDED else "store_error"
        return JsonResponse({"error": reason, "message": "the span store did not answer; retry later"}, status=503)
    # the spool is shared by every project, so its size is not shown here (operators: /healthz)
    held = quarantine.spans_by_project(settings.INGEST_SPOOL_DIR).get(str(key.project_id), 0)
    return JsonResponse({"project": key.project_name, **stored, "quarantined_spans": held,
                         "limits": limits.project_limits(key.project_id).as_dict(),
                         "throttled": limits.refused(key.project_id)})
