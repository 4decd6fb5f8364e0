"""Bearer-key lookup for ingest and the read API, cached briefly because ingest asks per request."""
import threading
import time
from dataclasses import dataclass

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from projects.errors import AccessError
from projects.models import ApiKey, hash_key
from store.reasons import Reason

CACHE_SECONDS = 5.0
CACHE_MAX_KEYS = 10_000  # only valid keys are cached; a flood of made-up tokens cannot grow it
_cache: dict[str, tuple[float, "KeyInfo"]] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class KeyInfo:
    project_id: int
    project_name: str
    scopes: frozenset[str]


class KeyError_(AccessError):
    """Authorization failed; reason is missing_key or unknown_key (401), or missing_scope (403).

    A revoked key answers unknown_key: the answer does not tell revoked keys from made-up ones.
    """


def bearer_token(header: str | None) -> str:
    """The key of an `Authorization: Bearer <key>` header; "" without one.
    TRICKY: OTEL_EXPORTER_OTLP_HEADERS is written Authorization=Bearer%20<key> and the OTel SDKs URL-decode it, but
    LiteLLM's OTEL_HEADERS passes it on as it is: "Bearer%20<key>" is the same key (keys hold no "%")."""
    if not header:
        return ""
    text = header.strip()
    if text[:9].lower() == "bearer%20":
        return text[9:].strip()
    scheme, _, token = text.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def authorize(header: str | None, scope: str) -> KeyInfo:
    """The key's project for an `Authorization: Bearer <key>` header, or KeyError_."""
    raw = bearer_token(header)
    if not raw:
        raise KeyError_(Reason.MISSING_KEY, "missing API key: send 'Authorization: Bearer <key>'")
    info = _lookup(hash_key(raw))
    if info is None:
        raise KeyError_(Reason.UNKNOWN_KEY, "unknown or revoked API key")
    if scope not in info.scopes:
        raise KeyError_(Reason.MISSING_SCOPE, f"this API key lacks the '{scope}' scope")
    return info


def _lookup(digest: str) -> KeyInfo | None:
    now = time.monotonic()
    with _lock:
        hit = _cache.get(digest)
    if hit and now - hit[0] < CACHE_SECONDS:
        return hit[1]
    key = ApiKey.objects.select_related("project").filter(key_hash=digest, revoked_at__isnull=True).first()
    if key is None:
        return None
    info = KeyInfo(key.project_id, key.project.name, key.scope_set)
    with _lock:
        if len(_cache) >= CACHE_MAX_KEYS:
            _cache.clear()
        _cache[digest] = (now, info)
    return info


@receiver(post_save, sender=ApiKey)
@receiver(post_delete, sender=ApiKey)
def _forget(sender, instance, **kwargs):
    with _lock:
        _cache.pop(instance.key_hash, None)
