"""ReasonError: the one base of every error an API answers with a reason code.

It lives here, in the store, because the store is the ground: it imports nothing of ours, yet its
ClickHouseError must share the base with the errors of ingest, analysis and projects, and every one of those
apps may import the store. ClickHouseError is here too, so code above the store can catch it without
importing the client (only store/, ingest/ and analysis/ talk to ClickHouse).

latency_obs/api_errors.py turns a ReasonError into the JSON answer of /api/ and /v1/ ({"error", "message"});
ingest/responses.py into the google.rpc.Status of /v1/traces, whose encoding follows the request.
"""
from django.conf import settings

from store.reasons import Reason


class ReasonError(Exception):
    """A refused request: `reason` one of the codes of store/reasons.py (the same in responses, logs and counters;
    a string that is none of them raises ValueError), `message` for people, `status` the HTTP status it answers
    with (the reason's unless the caller says)."""

    def __init__(self, reason: Reason | str, message: str, status: int | None = None):
        super().__init__(message)
        self.reason = Reason(reason)
        self.message = message
        self.status = self.reason.status if status is None else status

    def answer(self) -> tuple[int, str, str]:
        """(status, reason, message) as a client is told; a subclass whose reason or message is internal
        (the store's) overrides it."""
        return self.status, self.reason, self.message

    def headers(self) -> dict[str, str]:
        """Extra response headers (Retry-After for errors a client should retry later)."""
        return {}


TIMEOUT_EXCEEDED = 159  # ClickHouse's code for a read stopped by max_execution_time


class ClickHouseError(ReasonError):
    """A failed ClickHouse call; `reason` is a short code (unavailable, query_failed, store_busy), `code`
    ClickHouse's numeric error code when the server (or chDB) gave one, else None (network, client).

    An API answers it 503: query_timeout for a read stopped after CLICKHOUSE_QUERY_TIMEOUT_SECONDS, else
    store_error. The message it answers names no host or query: those details are for the server log.
    """

    def __init__(self, reason: Reason | str, message: str, code: int | None = None):
        super().__init__(reason, message)
        self.code = code

    @property
    def timed_out(self) -> bool:
        return self.code == TIMEOUT_EXCEEDED

    def answer(self) -> tuple[int, str, str]:
        if self.timed_out:
            return 503, Reason.QUERY_TIMEOUT, (f"the query ran longer than {settings.CLICKHOUSE_QUERY_TIMEOUT_SECONDS} s "
                                          "and was stopped; ask for a shorter window or a narrower filter")
        return 503, Reason.STORE_ERROR, "the span store did not answer (details in the server log); retry later"
