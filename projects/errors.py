from store.errors import ReasonError

STATUS = {"missing_key": 401, "unknown_key": 401, "missing_scope": 403, "not_found": 404}  # else 400


class AccessError(ReasonError):
    """Access to a project refused. Keys (KeyError_): missing_key and unknown_key answer 401, missing_scope 403.
    Membership: not_found 404 (a project that is not yours answers as a made-up name does), missing_parameter 400.
    """

    def __init__(self, reason: str, message: str):
        super().__init__(reason, message, status=STATUS.get(reason, 400))
