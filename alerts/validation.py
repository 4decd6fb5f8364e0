"""Webhook URL checks: https to public addresses only, so a webhook cannot reach internal services (SSRF)."""
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

MAX_URL_LENGTH = 2000
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))


def _address(raw: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    ip = ipaddress.ip_address(raw.split("%", 1)[0])  # drop an IPv6 zone id
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return ip.ipv4_mapped  # ::ffff:10.0.0.1 reaches 10.0.0.1
    return ip


def _embedded(ip) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and leads to: 6to4 (2002::/16), the Teredo client
    (2001::/32) or NAT64 (64:ff9b::/96, 64:ff9b:1::/48); None for other addresses.

    TRICKY: a relay or translator forwards such an address to the IPv4 inside it, so 2002:7f00:1::1 may
    reach 127.0.0.1 even though the IPv6 address itself looks global.
    """
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # (server, client): the client is the last 32 bits XOR 0xffffffff
    if any(ip in network for network in _NAT64):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _problem(ip) -> str | None:
    """Why an address is not a public unicast one ("a private address"), or None."""
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return "not a unicast internet address"
    if ip.is_private or not ip.is_global:
        return "a private address"
    return None


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
        inner = _embedded(ip)
        if inner is not None and (problem := _problem(inner)):  # never allowed, WEBHOOK_ALLOW_LOOPBACK or not
            raise ValidationError(f"The webhook host {host!r} is {problem} ({inner}, embedded in {ip}).")
        if ip.is_loopback and allow_loopback:
            continue
        if scheme == "http":
            raise ValidationError("http:// is accepted only for loopback receivers; use https://.")
        if problem := _problem(ip):
            raise ValidationError(f"The webhook host {host!r} is {problem} ({ip}).")
    return url, str(addresses[0])
