"""API keys: stored hashed, scoped, revocable; `authorize` turns a Bearer header into a project."""
import hashlib

import pytest

from projects.keys import KeyError_, authorize, bearer_token
from projects.models import ApiKey, Project


@pytest.fixture
def project(db):
    return Project.objects.create(name="gamma")


def test_raw_key_is_never_stored_only_its_sha256(project):
    key, raw = ApiKey.issue(project, ["ingest"], name="ci")
    key.refresh_from_db()
    assert raw.startswith("lo_") and len(raw) == 3 + 43  # 32 random bytes, urlsafe base64 without padding
    assert key.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert key.prefix == raw[:10] and key.name == "ci"
    # no column of the row holds the raw key
    stored = [str(v) for v in ApiKey.objects.filter(pk=key.pk).values().get().values()]
    assert all(raw not in value for value in stored)


def test_every_issued_key_is_different(project):
    raws = {ApiKey.issue(project, ["ingest"])[1] for _ in range(20)}
    assert len(raws) == 20


def test_scopes_are_deduplicated_sorted_and_parsed_back(project):
    key, _ = ApiKey.issue(project, ["read", "ingest", "read"])
    key.refresh_from_db()
    assert key.scopes == "ingest,read"
    assert key.scope_set == frozenset({"ingest", "read"})


@pytest.mark.parametrize("scopes", [["admin"], ["ingest", "write"], []])
def test_unknown_or_no_scope_is_refused_and_nothing_is_created(project, scopes):
    with pytest.raises(ValueError, match="scopes must be a non-empty subset of ingest, read"):
        ApiKey.issue(project, scopes)
    assert ApiKey.objects.count() == 0


def test_authorize_gives_the_keys_project_and_scopes(project):
    _, raw = ApiKey.issue(project, ["ingest"])
    info = authorize(f"Bearer {raw}", "ingest")
    assert (info.project_id, info.project_name, info.scopes) == (project.id, "gamma", frozenset({"ingest"}))
    assert authorize(f"bearer   {raw}  ", "ingest") == info  # scheme is case-insensitive, spaces trimmed


def test_authorize_refuses_a_scope_the_key_lacks(project):
    _, raw = ApiKey.issue(project, ["read"])
    with pytest.raises(KeyError_) as exc:
        authorize(f"Bearer {raw}", "ingest")
    assert exc.value.reason == "missing_scope"


def test_a_revoked_key_fails_even_right_after_it_was_used(project):
    key, raw = ApiKey.issue(project, ["ingest"])
    authorize(f"Bearer {raw}", "ingest")  # now in the 5 s lookup cache
    key.revoke()
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    with pytest.raises(KeyError_) as exc:
        authorize(f"Bearer {raw}", "ingest")
    assert exc.value.reason == "unknown_key"


@pytest.mark.parametrize("header,reason", [
    (None, "missing_key"), ("", "missing_key"), ("Basic dXNlcjpwYXNz", "missing_key"), ("Bearer ", "missing_key"),
    ("Bearer lo_not-a-key", "unknown_key"),
])
def test_authorize_names_why_a_header_is_refused(db, header, reason):
    with pytest.raises(KeyError_) as exc:
        authorize(header, "ingest")
    assert exc.value.reason == reason


def test_bearer_token_reads_only_the_bearer_scheme():
    assert (bearer_token("Bearer abc"), bearer_token("Token abc"), bearer_token(None)) == ("abc", "", "")


def test_a_url_encoded_space_after_bearer_is_the_same_key(project):
    """LiteLLM's OTEL_HEADERS=Authorization=Bearer%20<key> reaches us undecoded: it authorizes as the key."""
    _, raw = ApiKey.issue(project, ["ingest"])
    assert bearer_token(f"Bearer%20{raw}") == bearer_token(f"bearer%20{raw}") == raw
    assert authorize(f"Bearer%20{raw}", "ingest").project_id == project.pk
    assert bearer_token("Bearer%20") == "" and bearer_token("Bearerx%20abc") == ""
