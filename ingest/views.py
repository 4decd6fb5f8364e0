"""OTLP/HTTP trace receiver: POST /v1/traces, protobuf or JSON, answered in the request's encoding."""
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from ingest import queries, responses
from ingest.errors import IngestError
from ingest.pipeline import SpoolFull, export
from projects.keys import KeyError_, authorize

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
    except SpoolFull:
        return responses.throttled(encoding)
    return responses.success(decoded, encoding)


def _read_limited(request, limit: int) -> bytes:
    declared = int(request.META.get("CONTENT_LENGTH") or 0)
    if declared > limit:
        raise IngestError("body_too_large", f"request body exceeds {limit} bytes", status=413)
    return request.read(limit + 1)


@require_GET
def status(request) -> JsonResponse:
    """What a project has stored, for a `read` key: lets senders check that spans arrived."""
    try:
        key = authorize(request.headers.get("Authorization"), "read")
    except KeyError_ as exc:
        return JsonResponse({"error": exc.reason, "message": str(exc)}, status=exc.status)
    # the spool is shared by every project, so its size is not shown here (operators: /healthz)
    return JsonResponse({"project": key.project_name, **queries.ingest_status(key.project_id)})
