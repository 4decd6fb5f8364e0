from store.errors import ReasonError


class IngestError(ReasonError):
    """A request the ingest pipeline refuses as a whole.

    `reason` is a short code used in responses and logs; `status` the HTTP status it maps to (400 unless given).
    """
