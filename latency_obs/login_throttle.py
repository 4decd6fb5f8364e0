"""Failed logins limited per account and per client address (docs/operations.md "Security").

After LOGIN_MAX_FAILURES_PER_USER failures on a username, or LOGIN_MAX_FAILURES_PER_ADDRESS from one client
address, within LOGIN_FAILURE_WINDOW_SECONDS, every login of that username (or from that address) is refused
for LOGIN_LOCKOUT_SECONDS, the right password included. A success clears the account's count, never the
address's: one valid account must not buy a guesser more tries at others. Unknown usernames count like real
ones, so a lockout says nothing about which accounts exist.

Enforcement is an authentication backend listed before ModelBackend, the way django-axes does it: every
caller of authenticate() (our login page and the admin's) is refused while locked out; the login page then
says why (latency_obs/login.py). The class has no get_user(), so Django never names it as a session's
backend (force_login and get_user pass it by).

State is in Django's cache (settings: CACHES). Counts are per fixed window, as django-ratelimit counts:
cache.incr is atomic in memory and in Redis, so parallel guesses cannot slip past the limit, at the price of
up to 2N-1 failures across a window boundary. The times compared are now(), so tests move that clock; cache
expiry only clears old keys.
"""
import hashlib
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver

MESSAGES = {"account": "for this account", "address": "from this address"}


def now() -> float:
    return time.time()


@dataclass(frozen=True)
class Lockout:
    scope: str  # "account" or "address"
    until: float  # epoch seconds

    def seconds_left(self) -> int:
        return max(1, math.ceil(self.until - now()))

    def message(self) -> str:
        minutes = math.ceil(self.seconds_left() / 60)
        unit = "minute" if minutes == 1 else "minutes"
        return f"Too many failed logins {MESSAGES[self.scope]}; try again in {minutes} {unit}."


def client_address(request) -> str | None:
    """REMOTE_ADDR: the peer, or the client a trusted proxy names (waitress drops anyone else's X-Forwarded-For)."""
    return request.META.get("REMOTE_ADDR") if request is not None else None


def lockout(username: str | None, address: str | None) -> Lockout | None:
    """The lockout in force on this username or address (the one that ends last), or None."""
    keys = {_key("lock", scope, value): scope for scope, value in _scopes(username, address)}
    t = now()
    found = [Lockout(keys[key], until) for key, until in cache.get_many(keys).items() if until > t]
    return max(found, key=lambda lock: lock.until, default=None)


class LoginThrottle:
    """First in AUTHENTICATION_BACKENDS: stops authenticate() while the username or address is locked out."""

    def authenticate(self, request, username=None, **credentials):
        if lockout(username, client_address(request)):
            raise PermissionDenied  # authenticate() stops here: ModelBackend never checks the password
        return None


# TRICKY: connected when Django first loads the backend above, which authenticate() does before either fires.
@receiver(user_login_failed)
def count_failure(sender, credentials, request=None, **kwargs):
    """Counts a failure on the username and the address; at a limit, starts that lockout."""
    username, address = credentials.get("username"), client_address(request)
    if lockout(username, address):
        return  # refused while locked out: not counted, so retrying does not stretch the lockout
    t = now()
    limits = {"account": settings.LOGIN_MAX_FAILURES_PER_USER, "address": settings.LOGIN_MAX_FAILURES_PER_ADDRESS}
    for scope, value in _scopes(username, address):
        if _increment(_failures_key(scope, value, t)) >= limits[scope]:
            cache.set(_key("lock", scope, value), t + settings.LOGIN_LOCKOUT_SECONDS, settings.LOGIN_LOCKOUT_SECONDS)
            cache.delete(_failures_key(scope, value, t))  # after the lockout: a fresh count


@receiver(user_logged_in)
def clear_failures(sender, request, user, **kwargs):
    cache.delete(_failures_key("account", user.get_username(), now()))


def _scopes(username, address):
    return [(scope, value) for scope, value in (("account", username), ("address", address)) if value]


def _failures_key(scope: str, value: str, t: float) -> str:
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    return _key(f"failures:{int(t // window)}", scope, value)


def _key(kind: str, scope: str, value: str) -> str:
    # hashed: usernames are free text, and cache keys must be short and plain
    return f"login:{kind}:{scope}:{hashlib.sha256(value.encode()).hexdigest()[:32]}"


def _increment(key: str) -> int:
    cache.add(key, 0, settings.LOGIN_FAILURE_WINDOW_SECONDS)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, settings.LOGIN_FAILURE_WINDOW_SECONDS)
        return 1
