"""OTLP/HTTP answers: Export*ServiceResponse on success, google.rpc.Status on failure."""
import json

from django.conf import settings
from django.http import HttpResponse
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ingest.decode import Decoded
from store.errors import ReasonError
from store.reasons import Reason

MEDIA = {"protobuf": "application/x-protobuf", "json": "application/json"}
# google.rpc.Code for each HTTP status we answer with (Status.code is informative in OTLP/HTTP)
RPC_CODES = {400: 3, 401: 16, 403: 7, 413: 8, 415: 3, 429: 8, 503: 14}


def export_response(decoded: Decoded) -> ExportTraceServiceResponse:
    response = ExportTraceServiceResponse()
    message = decoded.message()
    if decoded.rejected_count or message:
        response.partial_success.rejected_spans = decoded.rejected_count
        response.partial_success.error_message = message
    return response


def _encode(message, encoding: str) -> bytes:
    if encoding == "json":
        return json.dumps(json_format.MessageToDict(message)).encode()
    return message.SerializeToString()


def success(message, encoding: str) -> HttpResponse:
    """200 with the Export*ServiceResponse (partial_success when points or spans were rejected)."""
    return HttpResponse(_encode(message, encoding), content_type=MEDIA[encoding])


def error(status: int, reason: Reason, message: str, encoding: str) -> HttpResponse:
    payload = Status(code=RPC_CODES.get(status, 2), message=f"{reason}: {message}")
    response = HttpResponse(_encode(payload, encoding), status=status, content_type=MEDIA[encoding])
    response["X-Latency-Obs-Reason"] = str(reason)  # a plain str: WSGI servers refuse a str subclass in headers
    return response


def throttled(encoding: str) -> HttpResponse:
    """503 spool_full: ingest as a whole is behind; every project waits."""
    message = "ingest is behind (ClickHouse slow or down); retry later"
    return retry_later(503, Reason.SPOOL_FULL, message, settings.INGEST_RETRY_AFTER_SECONDS, encoding)


def refused(exc: ReasonError, encoding: str) -> HttpResponse:
    """The Status answer of a refused request: a bad body or key (400-415), or a project over one of its
    limits (429 with Retry-After, ingest.limits.OverLimit; other projects go on). JSON APIs answer the same
    errors through latency_obs/api_errors.py."""
    response = error(*exc.answer(), encoding)
    for header, value in exc.headers().items():
        response[header] = value
    return response


def retry_later(status: int, reason: Reason, message: str, seconds: int, encoding: str) -> HttpResponse:
    # OTLP exporters retry 429 and 503 after Retry-After, and give up when it is past their own timeout
    response = error(status, reason, message, encoding)
    response["Retry-After"] = str(seconds)
    return response
