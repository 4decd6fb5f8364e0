"""OTLP/HTTP receivers: POST /v1/traces, /v1/metrics and /v1/logs, protobuf or JSON, answered in the request's encoding."""
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from ingest import cardinality, limits, logs as logs_in, metrics as metrics_in, quarantine, queries, responses
from ingest.errors import IngestError
from ingest.pipeline import SpoolFull, export
from projects.keys import authorize
from store.errors import ReasonError
from store.reasons import Reason

CONTENT_TYPES = {"application/x-protobuf": "protobuf", "application/protobuf": "protobuf", "application/json": "json"}


@csrf_exempt
@require_POST
def traces(request) -> HttpResponse:
    return _receive(request, export, responses.export_response)


@csrf_exempt
@require_POST
def metrics(request) -> HttpResponse:
    return _receive(request, metrics_in.export, metrics_in.response)


@csrf_exempt
@require_POST
def logs(request) -> HttpResponse:
    return _receive(request, logs_in.export, logs_in.response)


def _receive(request, export_, answer) -> HttpResponse:
    encoding = CONTENT_TYPES.get(request.content_type or "")
    if encoding is None:
        return responses.error(415, Reason.UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/x-protobuf or application/json", "json")
    try:
        raw = _read_limited(request, settings.INGEST_MAX_BODY_BYTES)
        decoded = export_(request.headers.get("Authorization"), raw, encoding, request.headers.get("Content-Encoding", ""))
    except ReasonError as exc:  # a bad key, body or size, or a project over its limits
        return responses.refused(exc, encoding)
    except SpoolFull:
        return responses.throttled(encoding)
    return responses.success(answer(decoded), encoding)


def _read_limited(request, limit: int) -> bytes:
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:  # unreadable: Django's request stream then holds no body, as if it were 0
        declared = 0
    if declared > limit:
        raise IngestError(Reason.BODY_TOO_LARGE, f"request body exceeds {limit} bytes")
    return request.read(limit + 1)


@require_GET
def status(request) -> JsonResponse:
    """What a project has stored, its ingest limits and the spans this process refused for it recently.

    A bad key answers 401/403 and a store that is slow or down 503, as JSON (latency_obs/api_errors.py)."""
    key = authorize(request.headers.get("Authorization"), "read")
    stored = queries.ingest_status(key.project_id)
    # the spool is shared by every project, so its size is not shown here (operators: /healthz)
    held = quarantine.spans_by_project(settings.INGEST_SPOOL_DIR).get(str(key.project_id), 0)
    return JsonResponse({"project": key.project_name, **stored, "quarantined_spans": held,
                         "limits": limits.project_limits(key.project_id).as_dict(),
                         "throttled": limits.refused(key.project_id),
                         "cardinality": cardinality.status(key.project_id)})
