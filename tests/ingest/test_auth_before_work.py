"""The key is checked before anything of a body is inflated or parsed, and gunzip is bounded in size and time."""
import gzip
import os
import time
import tracemalloc

import pytest

from ingest import decode
from ingest.decode import read_body
from ingest.errors import IngestError
from projects.models import ApiKey
from tests import factories as f
from tests.ingest.test_bad_input import answer, failure, post, stored


@pytest.fixture
def alpha(alpha, clickhouse):
    return alpha


@pytest.fixture
def no_gunzip(monkeypatch):
    """Fails the test if anything is inflated."""
    def refuse(*args):
        raise AssertionError("the body was inflated")

    monkeypatch.setattr(decode, "_gunzip", refuse)


@pytest.mark.parametrize("auth, status, reason", [
    ("missing", 401, "missing_key"), ("wrong", 401, "unknown_key"), ("read_only", 403, "missing_scope"),
])
def test_invalid_gzip_without_a_valid_key_is_refused_for_the_key_not_the_gzip(client, alpha, no_gunzip,
                                                                              auth, status, reason):
    project, _ = alpha
    key = {"missing": None, "wrong": "lo_" + "x" * 43, "read_only": ApiKey.issue(project, ["read"])[1]}[auth]
    # with a valid key this body would be a 400 malformed_gzip
    failure(post(client, key, b"this is not gzip", HTTP_CONTENT_ENCODING="gzip"), status, reason)


def test_gzip_bomb_with_a_wrong_key_is_refused_at_once_without_inflating(client, alpha, no_gunzip):
    project, _ = alpha
    bomb = gzip.compress(b"\0" * 64 * 1024 * 1024, compresslevel=9)  # 64 MiB of zeros -> ~64 KB
    tracemalloc.start()
    began = time.monotonic()
    try:
        response = post(client, "lo_" + "x" * 43, bomb, HTTP_CONTENT_ENCODING="gzip")
        elapsed, peak = time.monotonic() - began, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    failure(response, 401, "unknown_key")
    assert elapsed < 1 and peak < 5_000_000  # a key lookup, not 64 MiB of output
    assert stored(project) == []


def test_a_valid_key_still_gets_its_gzip_body_inflated(client, alpha):
    project, key = alpha
    s = f.attempt()
    answer(post(client, key, gzip.compress(f.request(s).SerializeToString()), HTTP_CONTENT_ENCODING="gzip"))
    failure(post(client, key, b"this is not gzip", HTTP_CONTENT_ENCODING="gzip"), 400, "malformed_gzip")
    assert stored(project) == [s.span_id.hex()]


def test_inflating_past_the_time_limit_is_a_413(client, alpha, settings):
    project, key = alpha
    settings.INGEST_MAX_INFLATE_SECONDS = -1  # the deadline has passed before the first chunk
    body = gzip.compress(f.request(f.attempt()).SerializeToString())
    status = failure(post(client, key, body, HTTP_CONTENT_ENCODING="gzip"), 413, "body_too_large")
    assert "took over -1 s" in status.message
    assert stored(project) == []


class Ticking:
    """A clock that advances one second per reading."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


def test_gunzip_stops_at_the_deadline_between_chunks():
    body = gzip.compress(b"\0" * 10 * decode.INFLATE_CHUNK_BYTES, compresslevel=1)
    with pytest.raises(IngestError) as exc:
        read_body(body, "gzip", 100 * decode.INFLATE_CHUNK_BYTES, max_seconds=5, clock=Ticking())
    # deadline at 1 + 5 = 6: the readings 2..6 let five chunks through, the one at 7 stops
    assert (exc.value.status, exc.value.reason, exc.value.message) == (413, "body_too_large",
                                                                       "decompressing the body took over 5 s")


def test_gunzip_in_chunks_gives_the_exact_body_and_keeps_the_size_limit():
    data = os.urandom(1000) * 3500  # 3.5 MB: several chunks, the last one partial
    body = gzip.compress(data)
    assert read_body(body, "gzip", len(data)) == data
    with pytest.raises(IngestError) as exc:
        read_body(body, "gzip", len(data) - 1)
    assert (exc.value.status, exc.value.reason) == (413, "body_too_large")
    exact = b"x" * decode.INFLATE_CHUNK_BYTES * 2  # ends exactly on a chunk boundary
    assert read_body(gzip.compress(exact), "gzip", len(exact)) == exact
    with pytest.raises(IngestError) as exc:
        read_body(body[:-20], "gzip", len(data))
    assert (exc.value.reason, exc.value.message) == ("malformed_gzip", "gzip body is truncated")
