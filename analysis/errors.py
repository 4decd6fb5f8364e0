class AnalysisError(Exception):
    """A diagnosis request the analysis app refuses.

    `reason` is a short code used in responses and logs (bad_date, unknown_service, window_too_large,
    missing_parameter, not_found); `status` the HTTP status it maps to.
    """

    def __init__(self, reason: str, message: str, status: int = 400):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.status = status
