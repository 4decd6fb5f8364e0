"""Typed environment readers: a bad value stops start-up with a message naming the variable."""
import json
import os
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_int(name: str, default: int, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be <= {maximum}, got {value}")
    return value


def env_float(name: str, default: float, minimum: float | None = None, maximum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None
    if value != value or (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ImproperlyConfigured(f"{name} must be between {minimum} and {maximum}, got {raw!r}")
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    if raw.strip().lower() in _TRUE:
        return True
    if raw.strip().lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0/true/false/yes/no/on/off, got {raw!r}")


def env_url(name: str, default: str, schemes: tuple[str, ...]) -> str:
    """A URL whose scheme is one of `schemes`."""
    raw = os.environ.get(name) or default
    scheme = urlparse(raw).scheme
    if scheme not in schemes:
        raise ImproperlyConfigured(f"{name} must start with one of {', '.join(s + '://' for s in schemes)}; got {raw!r}")
    return raw


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name, default)
    if raw.upper() not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {raw!r}")
    return raw.upper()


def env_json_object(name: str) -> dict:
    """A JSON object, e.g. ANALYSIS_THRESHOLDS='{"queue_p95_ms": 2000}'; {} when unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object, got {raw!r}")
    return value


def env_int_list(name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    """Comma-separated positive integers in ascending order, e.g. 1000,4000,16000."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        values = tuple(int(x) for x in raw.split(",") if x.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be comma-separated integers, got {raw!r}") from None
    if not values or list(values) != sorted(set(values)) or values[0] <= 0:
        raise ImproperlyConfigured(f"{name} must be ascending positive integers, got {raw!r}")
    return values
