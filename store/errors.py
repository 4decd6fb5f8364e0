"""ReasonError: the one base of every error an API answers with a reason code.

It lives here, in the store, because the store is the ground: it imports nothing of ours, yet its
ClickHouseError must share the base with the errors of ingest, analysis and projects, and every one of those
apps may import the store. This module imports nothing at all, so the store stays at the ground.

latency_obs/api_errors.py turns a ReasonError into the JSON answer of /api/ and /v1/ ({"error", "message"});
ingest/responses.py into the google.rpc.Status of /v1/traces, whose encoding follows the request.
"""


class ReasonError(Exception):
    """A refused request: `reason` a short snake_case code (the same in responses, logs and counters),
    `message` for people, `status` the HTTP status it answers with (400 unless a subclass or caller says)."""

    status = 400

    def __init__(self, reason: str, message: str, status: int | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        if status is not None:
            self.status = status

    def answer(self) -> tuple[int, str, str]:
        """(status, reason, message) as a client is told; a subclass whose reason or message is internal
        (the store's) overrides it."""
        return self.status, self.reason, self.message

    def headers(self) -> dict[str, str]:
        """Extra response headers (Retry-After for errors a client should retry later)."""
        return {}
