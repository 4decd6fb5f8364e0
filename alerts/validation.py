"""Webhook URL checks: https to public addresses only, so a webhook cannot reach internal services (SSRF)."""
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

MAX_URL_LENGTH = 2000


def _address(raw: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    ip = ipaddress.ip_address(raw.split("%", 1)[0])  # drop an IPv6 zone id
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return ip.ipv4_mapped  # ::ffff:10.0.0.1 reaches 10.0.0.1
    return ip


def _resolve(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValidationError(f"The webhook host {host!r} cannot be resolved ({exc}).") from None
    return [_address(info[4][0]) for info in infos]


def validate_webhook_url(url: str) -> str:
    """The URL when it may be posted to; ValidationError saying why not."""
    return checked_target(url)[0]


def checked_target(url: str) -> tuple[str, str]:
    """(url, address): the URL when it may be posted to and the checked address to connect to, so the
    request cannot be steered elsewhere by a second DNS answer (rebinding). ValidationError saying why not."""
    url = (url or "").strip()
    if not url or len(url) > MAX_URL_LENGTH:
        raise ValidationError(f"Enter a webhook URL of at most {MAX_URL_LENGTH} characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValidationError(f"The webhook URL cannot be parsed ({exc}).") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise ValidationError("Webhook URLs must start with https://.")
    if parts.username is not None or parts.password is not None:
        raise ValidationError("Webhook URLs must not contain a user name or password.")
    host = parts.hostname
    if not host:
        raise ValidationError("The webhook URL has no host.")
    allow_loopback = settings.WEBHOOK_ALLOW_LOOPBACK
    if scheme == "http" and not allow_loopback:
        raise ValidationError("Webhook URLs must start with https:// (http:// is accepted only for loopback "
                              "receivers when WEBHOOK_ALLOW_LOOPBACK is on).")
    addresses = _resolve(host, port or (443 if scheme == "https" else 80))
    # every address counts: a host may resolve to one public and one private address
    for ip in addresses:
        if ip.is_loopback:
            if not allow_loopback:
                raise ValidationError(f"The webhook host {host!r} is a loopback address ({ip}).")
            continue
        if scheme == "http":
            raise ValidationError("http:// is accepted only for loopback receivers; use https://.")
        if ip.is_link_local:
            raise ValidationError(f"The webhook host {host!r} is a link-local address ({ip}).")
        if ip.is_multicast or ip.is_reserved or ip.is_unspecified:
            raise ValidationError(f"The webhook host {host!r} is not a unicast internet address ({ip}).")
        if ip.is_private or not ip.is_global:
            raise ValidationError(f"The webhook host {host!r} is a private address ({ip}).")
    return url, str(addresses[0])
