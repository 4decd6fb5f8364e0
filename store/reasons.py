"""Reason codes: every refusal the APIs, the OTLP receivers and the CLI answer with, each with its HTTP status.

One enum, as Snuba keeps its error codes: a new refusal is a member here and a row of docs/api.md's table (a test
checks both ways), and a ReasonError (store/errors.py) takes its status from its member unless told otherwise.
A member is a str, so `exc.reason == "not_found"` and JSON bodies read the plain code. Here, at the ground,
because every app raises them.
"""
from enum import StrEnum


class Reason(StrEnum):
    status: int

    def __new__(cls, code: str, status: int):
        member = str.__new__(cls, code)
        member._value_ = code
        member.status = status
        return member

    # requests any API refuses
    BAD_REQUEST = "bad_request", 400
    MISSING_PARAMETER = "missing_parameter", 400
    BAD_DATE = "bad_date", 400
    WINDOW_TOO_LARGE = "window_too_large", 400
    MISSING_KEY = "missing_key", 401
    UNKNOWN_KEY = "unknown_key", 401
    FORBIDDEN = "forbidden", 403
    MISSING_SCOPE = "missing_scope", 403
    NOT_FOUND = "not_found", 404
    UNKNOWN_SERVICE = "unknown_service", 404
    METHOD_NOT_ALLOWED = "method_not_allowed", 405
    INTERNAL_ERROR = "internal_error", 500
    # an incident id that lives on as another (merged) or ended (gone): analysis/incidents/documents.py
    MERGED = "merged", 301
    GONE = "gone", 410
    # OTLP bodies (/v1/traces, /v1/metrics, /v1/logs and gRPC)
    MALFORMED_PROTOBUF = "malformed_protobuf", 400
    MALFORMED_JSON = "malformed_json", 400
    MALFORMED_GZIP = "malformed_gzip", 400
    UNSUPPORTED_ENCODING = "unsupported_encoding", 400
    BODY_TOO_LARGE = "body_too_large", 413
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type", 415
    RATE_LIMITED = "rate_limited", 429
    SPOOL_QUOTA = "spool_quota", 429
    SPOOL_FULL = "spool_full", 503
    # the span store (store/client.py): the first three are raised, the last two what an API answers for them
    UNAVAILABLE = "unavailable", 503
    QUERY_FAILED = "query_failed", 503
    STORE_BUSY = "store_busy", 503
    QUERY_TIMEOUT = "query_timeout", 503
    STORE_ERROR = "store_error", 503
