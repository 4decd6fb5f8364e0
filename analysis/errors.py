from store.errors import ReasonError


class AnalysisError(ReasonError):
    """A diagnosis request the analysis app refuses.

    `reason` is a short code used in responses and logs (bad_date, unknown_service, window_too_large,
    missing_parameter, not_found); `status` the HTTP status it maps to (400 unless given).
    """
