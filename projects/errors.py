from store.errors import ReasonError


class AccessError(ReasonError):
    """Access to a project refused. Keys (KeyError_): missing_key and unknown_key answer 401, missing_scope 403.
    Membership: not_found 404 (a project that is not yours answers as a made-up name does), missing_parameter 400.
    """
