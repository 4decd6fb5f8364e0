"""Webhook URLs: https to public addresses; loopback only with WEBHOOK_ALLOW_LOOPBACK (IP literals: no DNS)."""
import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings

from alerts.validation import validate_webhook_url


@override_settings(WEBHOOK_ALLOW_LOOPBACK=False)
def test_https_to_a_public_address_is_accepted():
    assert validate_webhook_url(" https://93.184.216.34/hooks/T0/B0 ") == "https://93.184.216.34/hooks/T0/B0"
    assert validate_webhook_url("https://93.184.216.34:8443/x")


@override_settings(WEBHOOK_ALLOW_LOOPBACK=False)
@pytest.mark.parametrize("url, message", [
    ("http://example", "https://"),
    ("http://93.184.216.34/x", "https://"),
    ("ftp://93.184.216.34/x", "https://"),
    ("javascript:alert(1)", "https://"),
    ("https://user:pass@93.184.216.34/x", "user name or password"),
    ("https://10.0.0.1/x", "private"),
    ("https://192.168.1.1/x", "private"),
    ("https://172.16.5.4/x", "private"),
    ("https://100.64.0.1/x", "private"),
    ("https://169.254.169.254/latest/meta-data", "link-local"),
    ("https://[fe80::1]/x", "link-local"),
    ("https://[::ffff:10.0.0.1]/x", "private"),
    ("https://[::ffff:127.0.0.1]/x", "loopback"),
    ("https://224.0.0.1/x", "unicast"),
    ("https://240.0.0.1/x", "unicast"),
    ("https://0.0.0.0/x", "unicast"),
    ("https://[::1]/x", "loopback"),
    ("https://127.0.0.1/x", "loopback"),
    ("https://localhost/x", "loopback"),
    ("http://127.0.0.1:9/x", "https://"),
    ("https:///x", "no host"),
    ("https://93.184.216.34:99999/x", "cannot be parsed"),
    ("", "Enter a webhook URL"),
])
def test_refused_urls_say_why(url, message):
    with pytest.raises(ValidationError) as exc:
        validate_webhook_url(url)
    assert message in " ".join(exc.value.messages)


@override_settings(WEBHOOK_ALLOW_LOOPBACK=True)
def test_loopback_is_allowed_only_with_the_setting():
    assert validate_webhook_url("http://127.0.0.1:8080/hook")
    assert validate_webhook_url("http://[::1]:8080/hook")
    assert validate_webhook_url("http://localhost:8080/hook")
    # the setting opens loopback, not plain http to the internet nor private networks
    for url in ("http://93.184.216.34/x", "https://10.0.0.1/x", "http://10.0.0.1/x"):
        with pytest.raises(ValidationError):
            validate_webhook_url(url)


@override_settings(WEBHOOK_ALLOW_LOOPBACK=True)
@pytest.mark.parametrize("url, message", [
    # 6to4: the IPv4 is bits 16-48 (2002:7f00:0001:: -> 127.0.0.1)
    ("https://[2002:7f00:1::1]/x", "a loopback address (127.0.0.1, embedded in 2002:7f00:1::1)"),
    ("https://[2002:a00:1::1]/x", "a private address (10.0.0.1, embedded in 2002:a00:1::1)"),
    ("https://[2002:a9fe:a9fe::1]/x", "a link-local address (169.254.169.254"),
    # Teredo, server 65.54.227.120: the client is the last 32 bits XOR 0xffffffff (80ff:fffe -> 127.0.0.1)
    ("https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x", "a loopback address (127.0.0.1, embedded in"),
    ("https://[2001:0:4136:e378:8000:63bf:3f57:fffe]/x", "a private address (192.168.0.1, embedded in"),
    # NAT64 translates the last 32 bits
    ("https://[64:ff9b::7f00:1]/x", "a loopback address (127.0.0.1, embedded in"),
    ("https://[64:ff9b::a00:1]/x", "a private address (10.0.0.1, embedded in"),
])
def test_ipv6_forms_embedding_an_ipv4_are_judged_by_it_even_with_loopback_allowed(url, message):
    with pytest.raises(ValidationError) as exc:
        validate_webhook_url(url)
    assert message in " ".join(exc.value.messages)


@override_settings(WEBHOOK_ALLOW_LOOPBACK=False)
def test_6to4_of_a_public_address_is_accepted_and_other_translations_stay_refused():
    assert validate_webhook_url("https://[2002:808:808::1]/hook")  # 8.8.8.8
    # Teredo and NAT64 are not globally routable prefixes themselves, even around a public IPv4
    for url in ("https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/x", "https://[64:ff9b::808:808]/x"):
        with pytest.raises(ValidationError):
            validate_webhook_url(url)
