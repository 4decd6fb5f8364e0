"""manage.py create_api_key: creates the project if needed, prints the key once on stdout."""
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from projects.keys import authorize
from projects.models import ApiKey, Project


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("create_api_key", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_creates_the_project_and_prints_a_working_key_once(db):
    out, err = run("--project", "delta", "--scope", "ingest,read", "--name", "gateway")
    raw = out.strip()
    # stdout holds the key and nothing else, so `KEY=$(manage.py create_api_key ...)` works
    assert out == raw + "\n" and raw.startswith("lo_")
    assert "created project delta" in err and raw not in err
    project = Project.objects.get(name="delta")
    key = ApiKey.objects.get(project=project)
    assert (key.name, key.scopes, key.prefix) == ("gateway", "ingest,read", raw[:10])
    assert authorize(f"Bearer {raw}", "read").project_id == project.id


def test_an_existing_project_gets_another_key_and_is_not_created_again(db):
    Project.objects.create(name="delta")
    first, _ = run("--project", "delta")
    second, err = run("--project", "delta")
    assert "created project" not in err
    assert first != second and Project.objects.filter(name="delta").count() == 1
    # default scope: ingest only
    assert list(ApiKey.objects.values_list("scopes", flat=True)) == ["ingest", "ingest"]


def test_unknown_scope_is_an_error_and_creates_nothing(db):
    with pytest.raises(CommandError, match="scopes must be a non-empty subset"):
        run("--project", "epsilon", "--scope", "ingest,admin")
    assert not Project.objects.filter(name="epsilon").exists()
    assert ApiKey.objects.count() == 0
