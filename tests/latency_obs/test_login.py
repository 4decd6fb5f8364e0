"""Login: failures limited per account and per client address with a 429 that says why, and ?next= that
only ever leads to a path on this site."""
import os
import uuid
from urllib.parse import quote

import pytest
import redis
from django.contrib.auth.models import User
from django.core.cache import cache

from latency_obs import login_throttle

T0 = 1_800_000_000 // 900 * 900  # the start of a 15-minute failure window
HERE, ELSEWHERE = "10.0.0.1", "10.0.0.2"


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()  # the throttle's state lives in the process's cache
    yield
    cache.clear()


@pytest.fixture
def clock(monkeypatch):
    """The throttle's clock, stopped at T0; clock.at(seconds after T0) moves it."""

    class Clock:
        t = float(T0)

        def at(self, seconds: float) -> None:
            self.t = T0 + seconds

    c = Clock()
    monkeypatch.setattr(login_throttle, "now", lambda: c.t)
    return c


@pytest.fixture
def dora(db):
    return User.objects.create_user("dora", password="pw-dora", is_staff=True)


def attempt(client, username, password, address=HERE, next_url=None, **extra):
    url = "/login/" + (f"?next={quote(next_url, safe='')}" if next_url is not None else "")
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address, **extra)


def fail(client, username, times, address=HERE):
    """`times` wrong passwords; the statuses answered."""
    return [attempt(client, username, "wrong", address).status_code for _ in range(times)]


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_fifth_failure_locks_the_account_even_for_the_right_password(client, dora, clock):
    assert fail(client, "dora", 4) == [200] * 4
    fifth = attempt(client, "dora", "wrong")
    assert fifth.status_code == 429
    assert "Too many failed logins for this account; try again in 15 minutes." in fifth.content.decode()
    assert fifth["Retry-After"] == "900"

    clock.at(60)
    right = attempt(client, "dora", "pw-dora")
    page = right.content.decode()
    assert right.status_code == 429 and not logged_in(client)
    assert "try again in 14 minutes" in page and "correct username and password" not in page
    assert 'value="dora"' in page  # the form keeps the username


def test_lock_is_per_account(client, dora, clock):
    User.objects.create_user("erin", password="pw-erin")
    fail(client, "dora", 5)
    assert attempt(client, "erin", "pw-erin").status_code == 302  # same address, another account


def test_unknown_usernames_lock_like_real_ones(client, db, clock):
    """Nothing tells a guesser which accounts exist."""
    assert fail(client, "nobody", 5) == [200] * 4 + [429]
    assert "for this account" in attempt(client, "nobody", "x").content.decode()


def test_lockout_ends_after_the_cool_down(client, dora, clock):
    fail(client, "dora", 5)
    clock.at(899)
    last_second = attempt(client, "dora", "pw-dora")
    assert last_second.status_code == 429 and "try again in 1 minute." in last_second.content.decode()
    clock.at(900)
    assert attempt(client, "dora", "pw-dora").status_code == 302 and logged_in(client)


def test_attempts_during_the_lockout_do_not_stretch_it(client, dora, clock):
    fail(client, "dora", 5)
    for second in (100, 500, 899):
        clock.at(second)
        assert fail(client, "dora", 3) == [429] * 3
    clock.at(900)
    assert attempt(client, "dora", "pw-dora").status_code == 302


def test_after_the_lockout_the_count_starts_again(client, dora, clock):
    fail(client, "dora", 5)
    clock.at(900)
    assert fail(client, "dora", 5) == [200] * 4 + [429]


def test_failures_of_an_earlier_window_do_not_count(client, dora, clock):
    fail(client, "dora", 4)
    clock.at(900)  # the next window
    assert fail(client, "dora", 4) == [200] * 4
    assert attempt(client, "dora", "pw-dora").status_code == 302


def test_success_resets_the_accounts_count(client, dora, clock):
    fail(client, "dora", 4)
    assert attempt(client, "dora", "pw-dora").status_code == 302
    client.logout()
    assert fail(client, "dora", 4) == [200] * 4
    assert attempt(client, "dora", "pw-dora").status_code == 302


def test_twenty_failures_from_one_address_lock_it_for_every_account(client, dora, clock):
    # one failure each on 20 usernames: no account reaches 5, the address reaches 20
    statuses = [attempt(client, f"guess-{i}", "wrong").status_code for i in range(20)]
    assert statuses == [200] * 19 + [429]
    refused = attempt(client, "dora", "pw-dora")
    assert refused.status_code == 429 and not logged_in(client)
    assert "Too many failed logins from this address; try again in 15 minutes." in refused.content.decode()
    assert attempt(client, "dora", "pw-dora", address=ELSEWHERE).status_code == 302


def test_success_does_not_reset_the_addresss_count(client, dora, clock):
    """Logging into one's own account between guesses must not buy more guesses at others."""
    for i in range(19):
        attempt(client, f"guess-{i}", "wrong")
    assert attempt(client, "dora", "pw-dora").status_code == 302
    client.logout()
    assert attempt(client, "guess-19", "wrong").status_code == 429


def test_limits_come_from_settings(client, dora, clock, settings):
    settings.LOGIN_MAX_FAILURES_PER_USER = 2
    settings.LOGIN_LOCKOUT_SECONDS = 120
    assert fail(client, "dora", 2) == [200, 429]
    assert "try again in 2 minutes" in attempt(client, "dora", "pw-dora").content.decode()
    clock.at(120)
    assert attempt(client, "dora", "pw-dora").status_code == 302


def test_counts_and_lockouts_work_on_the_redis_cache(client, dora, clock, settings):
    """CACHE_URL=redis://...: the same add/incr/get_many through Django's RedisCache, on the real server."""
    url, prefix = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15"), f"lo-test-{uuid.uuid4().hex}"
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
                                   "KEY_PREFIX": prefix}}
    try:
        assert fail(client, "dora", 5) == [200] * 4 + [429]
        assert attempt(client, "dora", "pw-dora").status_code == 429
        clock.at(900)
        assert attempt(client, "dora", "pw-dora").status_code == 302
    finally:
        server = redis.Redis.from_url(url)
        for key in server.scan_iter(f"{prefix}:*"):  # only this test's keys: other tests share the DB number
            server.delete(key)


def test_admin_login_is_refused_during_a_lockout(client, dora, clock):
    fail(client, "dora", 5)
    response = client.post("/admin/login/?next=/admin/", {"username": "dora", "password": "pw-dora"},
                           REMOTE_ADDR=HERE)
    assert response.status_code == 200 and not logged_in(client)  # the admin's form, with its own error


@pytest.mark.parametrize("next_url", [
    "//evil.example/",
    "https://evil.example/",
    "http://evil.example",
    "///evil.example/",
    "/\\evil.example/",
    "\\\\evil.example",
    "/\t/evil.example",
    "https:evil.example",
    "javascript:alert(1)",
    "https://testserver/keys/",  # even this site's own host: paths only
])
def test_login_never_redirects_off_site(client, dora, next_url):
    # Host: evil.example makes Django's own check accept next=https://evil.example/ (ALLOWED_HOSTS='*')
    host = "testserver" if "testserver" in next_url else "evil.example"
    response = attempt(client, "dora", "pw-dora", next_url=next_url, HTTP_HOST=host)
    assert (response.status_code, response["Location"]) == (302, "/")


def test_login_redirects_to_a_local_path(client, dora):
    response = attempt(client, "dora", "pw-dora", next_url="/tenants/?project=alpha&range=6h")
    assert (response.status_code, response["Location"]) == (302, "/tenants/?project=alpha&range=6h")


def test_logout_never_redirects_off_site(client, dora):
    client.force_login(dora)
    response = client.post("/logout/?next=" + quote("https://evil.example/", safe=""), HTTP_HOST="evil.example")
    assert "evil.example" not in response.get("Location", "") and not logged_in(client)
