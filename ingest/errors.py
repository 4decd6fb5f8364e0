class IngestError(Exception):
    """A request the ingest pipeline refuses as a whole.

    `reason` is a short code used in responses and logs; `status` the HTTP status it maps to.
    """

    def __init__(self, reason: str, message: str, status: int = 400):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.status = status
