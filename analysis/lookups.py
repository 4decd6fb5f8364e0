"""Small reads behind the pickers and the empty state: a project's services, a service's routes, its latest attempt.

Windows are [start, end) (naive datetimes are UTC). These count by start_at (what the sort key holds), not
queued_at: they are hints for a picker, and stay fast over a day of a busy project.
"""
from datetime import datetime, timezone
from pathlib import Path

from analysis.windows import utc_naive
from store import client
from store.sql import SqlFiles

_sql = SqlFiles(Path(__file__).parent / "sql").text


def _params(project_id, start, end, **more) -> dict:
    return {"project_id": project_id, "start": utc_naive(start), "end": utc_naive(end), **more}


def services(project_id, start, end) -> list[dict]:
    """[{"service", "requests"}] with attempts started in the window, busiest first."""
    rows = client.query(_sql("services"), parameters=_params(project_id, start, end))
    return [{"service": r["service"], "requests": int(r["requests"])} for r in rows]


def routes(project_id, service, start, end) -> list[str]:
    """The service's routes in the window, sorted (at most 1000)."""
    rows = client.query_rows(_sql("routes"), parameters=_params(project_id, start, end, service=service))
    return [route for (route,) in rows]


def latest_request(project_id) -> datetime | None:
    """When the project's latest stored attempt was queued (aware UTC), None when it has none."""
    [(latest,)] = client.query_rows(_sql("latest_request"), parameters={"project_id": project_id})
    if latest is None or latest.year <= 1970:
        return None
    return latest.replace(tzinfo=timezone.utc)
