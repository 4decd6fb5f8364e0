"""Security headers on pages, API answers, OTLP/HTTP answers and static files; cookie flags; SECURE_SSL;
no inline script in the pages' templates."""
import os
import re
import subprocess
import sys

import pytest
from django.contrib.auth.models import User

from latency_obs.security_headers import CONTENT_SECURITY_POLICY
from tests import factories as f
from tests.live import ROOT

TEMPLATES = ROOT / "templates"
OFFLINE = {"reports/weekly.html"}  # the weekly review's downloadable file: one offline HTML file, script inlined


def assert_hardened(response):
    policy = dict(d.strip().split(" ", 1) for d in response["Content-Security-Policy"].split(";"))
    assert policy["script-src"] == "'self'" and policy["default-src"] == "'self'"
    assert (policy["frame-ancestors"], policy["object-src"]) == ("'none'", "'none'")
    assert (policy["base-uri"], policy["form-action"], policy["img-src"]) == ("'self'", "'self'", "'self' data:")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def test_page_has_the_headers(client, db):
    response = client.get("/login/")
    assert response.status_code == 200
    assert_hardened(response)
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_api_answers_have_the_headers(client, alpha, clickhouse):
    _, key = alpha
    assert_hardened(client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {key}"))
    # error answers too, including those rewritten to JSON on the way out
    missing = client.get("/api/v1/ingest/status")
    assert missing.status_code == 401
    assert_hardened(missing)
    wrong_method = client.post("/api/v1/ingest/status")
    assert wrong_method.status_code == 405 and wrong_method["Content-Type"] == "application/json"
    assert_hardened(wrong_method)


def test_otlp_answers_have_the_headers(client, alpha, clickhouse):
    _, key = alpha
    body = f.request(f.attempt()).SerializeToString()
    sent = client.post("/v1/traces", body, content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert sent.status_code == 200
    assert_hardened(sent)
    assert_hardened(client.post("/v1/traces", body, content_type="application/x-protobuf"))  # 401


def test_static_files_have_the_headers(client, db):
    response = client.get("/static/dashboard/dashboard.js")
    assert response.status_code == 200
    assert_hardened(response)


def test_session_and_csrf_cookies_are_httponly_and_samesite(client, db):
    User.objects.create_user("dora", password="pw-dora")
    form = client.get("/login/")
    csrf = form.cookies["csrftoken"]
    assert csrf["samesite"] == "Lax" and not csrf["secure"]
    logged_in = client.post("/login/", {"username": "dora", "password": "pw-dora"})
    session = logged_in.cookies["sessionid"]
    assert session["httponly"] and session["samesite"] == "Lax" and not session["secure"]


@pytest.mark.slow  # settings read by a `manage.py shell` subprocess
def test_secure_ssl_makes_cookies_secure_sends_hsts_and_marks_requests_https(tmp_path):
    code = ("from django.conf import settings as s; from latency_obs.web_server import adjustments; "
            "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, adjustments()['url_scheme'])")
    assert _settings(tmp_path, code, SECURE_SSL="true") == "True True 31536000 https"
    assert _settings(tmp_path, code) == "False False 0 http"


def test_hsts_on_secure_requests(client, db, settings):
    settings.SECURE_HSTS_SECONDS = 31536000  # what SECURE_SSL=true sets
    assert client.get("/login/", secure=True)["Strict-Transport-Security"] == "max-age=31536000"


@pytest.mark.parametrize("template", sorted(str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.html")))
def test_no_inline_script_in_page_templates(template):
    """The policy would block it: script comes from static files, data from json_script."""
    if template in OFFLINE:
        return
    html = (TEMPLATES / template).read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    assert re.findall(r"\son[a-z]+\s*=", html) == []
    assert "javascript:" not in html


def _settings(tmp_path, code: str, **env) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("SECURE_SSL", "DATABASE_URL")}
    environ.update(DJANGO_SETTINGS_MODULE="latency_obs.settings", LATENCY_OBS_DATA_DIR=str(tmp_path), **env)
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=environ,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]
