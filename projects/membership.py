"""Who may see which project: the one membership check of the dashboard (dashboard/access.py) and the read
API (analysis/views.py). A project the caller may not see is refused exactly as a made-up name is."""
from django.db.models import QuerySet

from projects.errors import AccessError
from projects.keys import authorize
from projects.models import Project
from store.reasons import Reason


def visible_projects(user) -> QuerySet:
    """The projects the user is a member of (a superuser: all), by name."""
    projects = Project.objects.all() if user.is_superuser else user.projects.all()
    return projects.order_by("name")


def member_project(user, name: str) -> Project | None:
    """The project called `name` if the user may see it, else AccessError(Reason.NOT_FOUND); without a name their
    first by name, None when they see none."""
    projects = visible_projects(user)
    if not name:
        return projects.first()
    project = projects.filter(name=name).first()
    if project is None:
        raise AccessError(Reason.NOT_FOUND, f"no project {name!r} for this user")
    return project


def readable_project(user, authorization: str | None, name: str) -> Project:
    """The project an API caller may read: the key's own, or the one the session user names among theirs.

    A Bearer header always wins over the session; no header and no session is missing_key (401). A key that
    names another project with `name` is not_found. A session user in several projects must name one
    (missing_parameter); one in none gets not_found. Raises AccessError (KeyError_ for key failures).
    """
    if authorization or not user.is_authenticated:
        key = authorize(authorization, "read")
        if name and name != key.project_name:
            raise AccessError(Reason.NOT_FOUND, f"no project {name!r} for this key")
        return Project.objects.get(pk=key.project_id)
    if name:
        return member_project(user, name)
    projects = list(visible_projects(user)[:2])
    if not projects:
        raise AccessError(Reason.NOT_FOUND, "this user belongs to no project")
    if len(projects) > 1:
        raise AccessError(Reason.MISSING_PARAMETER, "this user belongs to several projects: pass ?project=NAME")
    return projects[0]
