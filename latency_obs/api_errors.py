"""JSON errors for machines: every error under /api/ and /v1/ answers JSON, never one of Django's HTML pages.

The one place a refused API request becomes its answer: the API views raise a ReasonError (store/errors.py:
bad keys, bad parameters, a project that is not yours, a store that did not answer, ...) and
JsonErrorsMiddleware.process_exception answers it {"error": reason, "message": ...} with its status.
(/v1/traces answers the same errors as an OTLP google.rpc.Status in the request's encoding: ingest/responses.py.)
What Django answers by itself is HTML or empty: 404 for an unknown path, 405 from require_POST/require_GET,
400 for a suspicious request, 500 for an uncaught exception (and the DEBUG pages). handler404/handler500
answer JSON on these prefixes, and JsonErrorsMiddleware rewrites what is left (405, 400, DEBUG pages) in
the same shape. Every such answer has the reason in the X-Latency-Obs-Reason header too, as /v1/traces sends it.
Pages outside the prefixes keep Django's HTML.
"""
import logging

from django.http import HttpResponse, JsonResponse
from django.views import defaults

from store.errors import ReasonError
from store.reasons import Reason

log = logging.getLogger(__name__)

API_PREFIXES = ("/api/", "/v1/")
REASONS = {  # what Django answers by itself, by status
    400: Reason.BAD_REQUEST, 403: Reason.FORBIDDEN, 404: Reason.NOT_FOUND, 405: Reason.METHOD_NOT_ALLOWED,
    413: Reason.BODY_TOO_LARGE, 500: Reason.INTERNAL_ERROR,
}
MESSAGES = {
    400: "the request could not be read",
    403: "forbidden",
    404: "no such endpoint",
    413: "request body too large",
    500: "internal error; it was logged",
}
# bodies a client can parse: our JSON, and the protobuf google.rpc.Status /v1/traces answers in
MACHINE_TYPES = ("application/json", "application/x-protobuf", "application/protobuf")
_BODY_HEADERS = {"content-type", "content-length", "content-encoding", "content-disposition", "content-language"}


def is_api(request) -> bool:
    return request.path_info.startswith(API_PREFIXES)


def json_error(status: int, message: str | None = None, reason: str | None = None) -> JsonResponse:
    """{"error": reason, "message": ...} for an HTTP status; the reason is also in X-Latency-Obs-Reason."""
    reason = reason or REASONS.get(status, f"http_{status}")
    response = JsonResponse({"error": reason, "message": message or MESSAGES.get(status, reason)}, status=status)
    response["X-Latency-Obs-Reason"] = str(reason)  # a plain str: WSGI servers refuse a str subclass in headers
    return response


def refused(request, exc: ReasonError) -> JsonResponse:
    """The JSON answer of a ReasonError, with its headers (Retry-After). A 5xx is logged: the caller is told
    only the reason (a store failure's details, such as hosts, stay in the server log)."""
    status, reason, message = exc.answer()
    if status >= 500:
        timed_out = reason == Reason.QUERY_TIMEOUT  # expected under load: no traceback
        log.log(logging.WARNING if timed_out else logging.ERROR, "%s %s answered %s %s: %s",
                request.method, request.path_info[:200], status, reason, exc, exc_info=None if timed_out else exc)
    response = json_error(status, message, reason)
    for header, value in exc.headers().items():
        response[header] = value
    return response


def _machine_readable(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").split(";")[0].strip().lower() in MACHINE_TYPES


def _as_json(request, response: HttpResponse) -> JsonResponse:
    message = None
    if response.status_code == 405:
        message = f"{request.method[:20]} is not allowed here; allowed: {response.get('Allow', 'none')}"
    replacement = json_error(response.status_code, message)
    # the other middleware's headers (Allow, Retry-After, HSTS, Vary, ...) stay; only the body changes
    for header, value in response.items():
        if header.lower() not in _BODY_HEADERS:
            replacement.setdefault(header, value)
    return replacement


class JsonErrorsMiddleware:
    """Answers a ReasonError raised by a view on /api/ or /v1/ (refused()), and turns any other error answer
    there that is not JSON (or protobuf) into json_error().

    Put it before Django's middleware in MIDDLEWARE so it also sees their answers.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code >= 400 and is_api(request) and not _machine_readable(response):
            return _as_json(request, response)
        return response

    def process_exception(self, request, exception):
        """A ReasonError raised by an API view is its answer; anything else goes on to handler500."""
        if isinstance(exception, ReasonError) and is_api(request):
            return refused(request, exception)
        return None


def page_not_found(request, exception=None):
    """handler404: JSON on the API prefixes, Django's page elsewhere."""
    if is_api(request):
        return json_error(404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    """handler500: JSON on the API prefixes, Django's page elsewhere. Django has already logged the exception."""
    if is_api(request):
        return json_error(500)
    return defaults.server_error(request)
