"""projects.membership: the one rule the dashboard and the read API use to decide who sees which project."""
import pytest
from django.contrib.auth.models import AnonymousUser, User

from projects.errors import AccessError
from projects.keys import KeyError_
from projects.membership import member_project, readable_project, visible_projects
from projects.models import ApiKey, Project


@pytest.fixture
def ann(alpha):
    user = User.objects.create_user("ann", password="x")
    alpha[0].members.add(user)
    return user


def test_a_member_sees_only_her_projects_by_name(ann, alpha, beta):
    gamma = Project.objects.create(name="gamma")
    gamma.members.add(ann)
    assert list(visible_projects(ann)) == [alpha[0], gamma]


def test_a_superuser_sees_every_project(alpha, beta):
    root = User.objects.create_superuser("root", password="x")
    assert list(visible_projects(root)) == [alpha[0], beta[0]]


def test_another_projects_name_is_refused_as_a_made_up_one(ann, alpha, beta):
    assert member_project(ann, "alpha") == alpha[0]
    for name in ("beta", "no-such"):
        with pytest.raises(AccessError) as exc:
            member_project(ann, name)
        assert (exc.value.status, exc.value.reason) == (404, "not_found")


def test_without_a_name_a_member_gets_her_first_project_and_an_outsider_none(ann, alpha, beta):
    assert member_project(ann, "") == alpha[0]
    assert member_project(User.objects.create_user("outsider"), "") is None


def test_a_read_key_reads_its_own_project_and_no_other(alpha, beta):
    project, key = alpha
    assert readable_project(AnonymousUser(), f"Bearer {key}", "") == project
    assert readable_project(AnonymousUser(), f"Bearer {key}", "alpha") == project
    with pytest.raises(AccessError) as exc:
        readable_project(AnonymousUser(), f"Bearer {key}", "beta")
    assert (exc.value.status, exc.value.reason) == (404, "not_found")


def test_the_key_wins_over_the_session(ann, alpha, beta):
    # ann is a member of alpha, but the header she sends is beta's key: beta is read
    assert readable_project(ann, f"Bearer {beta[1]}", "") == beta[0]
    _, ingest_only = ApiKey.issue(alpha[0], ["ingest"])
    with pytest.raises(KeyError_) as exc:
        readable_project(ann, f"Bearer {ingest_only}", "alpha")
    assert (exc.value.status, exc.value.reason) == (403, "missing_scope")


def test_no_key_and_no_session_is_missing_key(db):
    with pytest.raises(KeyError_) as exc:
        readable_project(AnonymousUser(), None, "alpha")
    assert (exc.value.status, exc.value.reason) == (401, "missing_key")


def test_a_session_in_several_projects_must_name_one(ann, alpha, beta):
    beta[0].members.add(ann)
    with pytest.raises(AccessError) as exc:
        readable_project(ann, None, "")
    assert (exc.value.status, exc.value.reason) == (400, "missing_parameter")
    assert readable_project(ann, None, "beta") == beta[0]


def test_a_session_in_no_project_gets_not_found(db):
    with pytest.raises(AccessError) as exc:
        readable_project(User.objects.create_user("outsider"), None, "")
    assert (exc.value.status, exc.value.reason) == (404, "not_found")
