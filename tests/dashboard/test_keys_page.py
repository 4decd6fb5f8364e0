"""The Keys page: a created key is shown once and works, revoking stops it, forms need a CSRF token, scopes
are validated, names render as text, and a member of beta can neither see nor change alpha's keys."""
import re

import pytest
from django.test import Client
from django.utils.html import escape

from projects import keys as project_keys
from projects.models import ApiKey, hash_key

RAW_KEY = re.compile(r'<pre id="raw-key">(lo_[A-Za-z0-9_-]{43})</pre>')
HOSTILE_NAME = '<script>alert("key")</script>'






def create(c, project="alpha", **data):
    return c.post(f"/keys/?project={project}", {"action": "create", **data})


def revoke(c, key, project="alpha"):
    query = f"?project={project}" if project else ""
    return c.post(f"/keys/{query}", {"action": "revoke", "key": key.pk})


def raw_key(response) -> str:
    found = RAW_KEY.findall(response.content.decode())
    assert len(found) == 1, "the new key is shown exactly once on the page"
    return found[0]


def test_create_shows_the_raw_key_once_and_it_authenticates(ann, members):
    response = create(ann, name="vllm-prod", scopes=["ingest"])
    assert response.status_code == 200
    raw = raw_key(response)
    html = response.content.decode()
    assert "Copy it now: it will not be shown again" in html
    assert "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://testserver/v1/traces\n" in html
    assert f"OTEL_EXPORTER_OTLP_TRACES_HEADERS=Authorization=Bearer%20{raw}</pre>" in html
    assert "no-store" in response["Cache-Control"]  # nor kept by a browser cache

    info = project_keys.authorize(f"Bearer {raw}", "ingest")
    assert (info.project_id, info.project_name, info.scopes) == (members["ann"][1].pk, "alpha", frozenset({"ingest"}))
    with pytest.raises(project_keys.KeyError_) as exc:
        project_keys.authorize(f"Bearer {raw}", "read")
    assert exc.value.reason == "missing_scope"

    key = ApiKey.objects.get(project__name="alpha", name="vllm-prod")
    assert key.key_hash == hash_key(raw) and key.key_hash != raw
    assert raw not in (key.prefix, key.name, key.scopes) and key.prefix == raw[:10]

    listing = ann.get("/keys/?project=alpha")
    html = listing.content.decode()
    assert listing.status_code == 200 and raw not in html and key.key_hash not in html
    assert 'id="raw-key"' not in html
    row = re.search(rf'<tr id="key-{key.pk}">(.*?)</tr>', html, re.S).group(1)
    assert f"<code>{raw[:10]}…</code>" in row and "vllm-prod" in row and ">ingest<" in row and ">active<" in row


def test_read_only_key_gets_no_exporter_snippet(ann):
    raw = raw_key(create(ann, scopes=["read"]))
    assert project_keys.authorize(f"Bearer {raw}", "read").project_name == "alpha"
    html = create(ann, scopes=["read"]).content.decode()
    assert "OTEL_EXPORTER_OTLP_TRACES_HEADERS" not in html and "/api/v1/diagnosis" in html


def test_revoke_makes_authorize_fail_and_shows_the_date(ann, members):
    raw = raw_key(create(ann, name="to-revoke", scopes=["ingest", "read"]))
    key = ApiKey.objects.get(name="to-revoke")
    assert key.scopes == "ingest,read"
    project_keys.authorize(f"Bearer {raw}", "ingest")  # now cached as valid in this process

    response = revoke(ann, key)
    assert (response.status_code, response["Location"]) == (302, "/keys/?project=alpha")
    key.refresh_from_db()
    assert key.revoked_at is not None
    # No cache clearing here: the post_save signal drops the key from this process's cache at once.
    with pytest.raises(project_keys.KeyError_) as exc:
        project_keys.authorize(f"Bearer {raw}", "ingest")
    assert exc.value.reason == "unknown_key"

    html = ann.get("/keys/?project=alpha").content.decode()
    row = re.search(rf'<tr id="key-{key.pk}">(.*?)</tr>', html, re.S).group(1)
    assert f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" in row and "Revoke…" not in row
    assert "Takes effect within" in html and "5 seconds" in html  # next to the other key's Revoke

    first = key.revoked_at
    assert revoke(ann, key).status_code == 302
    key.refresh_from_db()
    assert key.revoked_at == first  # revoking again keeps the first date
    # the other (fixture) key of alpha still works
    assert project_keys.authorize(f"Bearer {members['ann'][2]}", "read").project_name == "alpha"


def test_forms_need_a_csrf_token(members, clickhouse):
    c = Client(enforce_csrf_checks=True)
    c.force_login(members["ann"][0])
    alpha_key = ApiKey.objects.get(project__name="alpha")
    before = ApiKey.objects.count()
    assert create(c, name="no-token", scopes=["ingest"]).status_code == 403
    assert revoke(c, alpha_key).status_code == 403
    assert ApiKey.objects.count() == before
    alpha_key.refresh_from_db()
    assert alpha_key.is_active

    page = c.get("/keys/?project=alpha").content.decode()
    tokens = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert len(tokens) >= 3  # create form, revoke form of the fixture key, log-out form
    response = create(c, name="with-token", scopes=["ingest"], csrfmiddlewaretoken=tokens[0])
    assert response.status_code == 200 and ApiKey.objects.filter(name="with-token").count() == 1


def test_ben_cannot_list_create_or_revoke_alphas_keys(ann, ben, members):
    raw_key(create(ann, name="alpha-deploy", scopes=["ingest"]))
    alpha_keys = list(ApiKey.objects.filter(project__name="alpha"))
    assert len(alpha_keys) == 2

    assert ben.get("/keys/?project=alpha").status_code == 404
    assert create(ben, project="alpha", name="intruder", scopes=["ingest"]).status_code == 404
    assert not ApiKey.objects.filter(name="intruder").exists()
    for project in ("alpha", "beta", ""):  # naming alpha, his own project, or none: alpha's key id is not his
        assert revoke(ben, alpha_keys[0], project=project).status_code == 404
    assert all(k.is_active for k in ApiKey.objects.filter(project__name="alpha"))

    own = ben.get("/keys/")
    html = own.content.decode()
    assert own.status_code == 200 and "project beta" in html
    assert ApiKey.objects.get(project__name="beta").prefix in html
    assert "alpha-deploy" not in html
    for key in alpha_keys:
        assert key.prefix not in html


def test_anonymous_is_sent_to_login_and_changes_nothing(client, members, clickhouse):
    before = ApiKey.objects.count()
    response = client.get("/keys/?project=alpha")
    assert (response.status_code, response["Location"]) == (302, "/login/?next=/keys/%3Fproject%3Dalpha")
    assert create(client, name="anon", scopes=["ingest"]).status_code == 302
    assert revoke(client, ApiKey.objects.get(project__name="alpha")).status_code == 302
    assert ApiKey.objects.count() == before and ApiKey.objects.filter(revoked_at__isnull=False).count() == 0


def test_hostile_key_name_renders_as_text(ann):
    created = create(ann, name=HOSTILE_NAME, scopes=["ingest"])
    listing = ann.get("/keys/?project=alpha")
    for response in (created, listing):
        html = response.content.decode()
        assert HOSTILE_NAME not in html
        assert escape(HOSTILE_NAME) in html
    assert ApiKey.objects.get(project__name="alpha", name=HOSTILE_NAME)  # stored as typed


@pytest.mark.parametrize("data, error", [
    ({"scopes": []}, "Pick at least one scope."),
    ({"scopes": ["admin"]}, "Unknown scope admin: pick from ingest, read."),
    ({"scopes": ["ingest", "<b>x</b>"]}, f"Unknown scope {escape('<b>x</b>')}: pick from ingest, read."),
    ({"scopes": ["ingest"], "name": "n" * 101}, "Ensure this value has at most 100 characters (it has 101)."),
])
def test_invalid_forms_show_the_error_and_create_nothing(ann, data, error):
    before = ApiKey.objects.count()
    response = create(ann, **data)
    html = response.content.decode()
    assert response.status_code == 200 and f'<p class="warning form-error">{error}</p>' in html
    assert 'id="raw-key"' not in html
    assert ApiKey.objects.count() == before


def test_unknown_or_malformed_key_id_is_404(ann):
    for key in ("999999", "abc", ""):
        response = ann.post("/keys/?project=alpha", {"action": "revoke", "key": key})
        assert response.status_code == 404


def test_no_keys_says_what_to_do(ann, members):
    ApiKey.objects.filter(project__name="alpha").delete()
    html = ann.get("/keys/?project=alpha").content.decode()
    assert 'id="no-keys"' in html and "Create one below" in html and '<table id="keys"' not in html
