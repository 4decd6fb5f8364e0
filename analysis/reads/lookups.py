"""Small reads behind the pickers and the empty state: a project's services, a service's routes, its latest attempt.

Windows are [start, end) (naive datetimes are UTC), of queued_at as every analysis read, and counts are logical
(one per span id, whatever copies re-sends left), so a picker's count equals the Overview's and the diagnosis's
`requests`. A picker never gets every value: the SQL returns at most `limit` of the busiest (those containing `q`,
when searching), plus the selected one.
"""
from dataclasses import dataclass
from datetime import datetime, timezone

from analysis.reads import versions
from analysis.scope import Scope
from analysis.sql_files import sql as _sql
from store import client


@dataclass(frozen=True)
class Choices:
    """What a picker offers: values [{"value", "requests"}] busiest first (the selected one included, with
    requests None when it had no attempts in the window), how many values contain the search (all of them
    without one), and how many of those the picker leaves out (search to reach them)."""
    values: list[dict]
    matching: int
    more: int = 0


def _params(scope: Scope, **more) -> dict:
    return {"project_id": scope.project_id, **scope.split.params, **more}


def _choices(name: str, params: dict, selected: str, limit: int) -> Choices:
    # TRICKY: the SQL puts `selected` first and takes limit + 1, so that the `limit` busiest are there either way;
    # the extra one goes unless it is the selected one (ranked past `limit`, still shown).
    rows = client.query(_sql(name), parameters={**params, "selected": selected, "limit": limit + 1})
    rows.sort(key=lambda r: (-r["requests"], r["value"]))
    if len(rows) > limit and rows[-1]["value"] != selected:
        rows.pop()
    values = [{"value": r["value"], "requests": int(r["requests"])} for r in rows]
    if selected and all(v["value"] != selected for v in values):
        values.append({"value": selected, "requests": None})
    matching = int(rows[0]["matching"]) if rows else 0
    return Choices(values=values, matching=matching, more=matching - sum(1 for r in rows if r["hit"]))


def service_choices(scope: Scope, q: str = "", selected: str = "", limit: int = 50) -> Choices:
    """The service picker of the scope's project: at most `limit` services with attempts queued in its window whose
    name contains `q` (any case; "" = all), busiest first, plus `selected`. Kept while the window's data is unchanged
    (versions.kept): every page reads it. The scope's service, route and tenant are not read."""
    scope = Scope(scope.project_id, "", scope.start, scope.end)
    return versions.kept("services", scope, (q, selected, limit),
                         lambda s: _choices("services", _params(s, q=q), selected, limit))


def route_choices(scope: Scope, q: str = "", selected: str = "", limit: int = 50) -> Choices:
    """The route picker of the scope's service, as service_choices (routes "" are left out: "all routes" covers
    them; the scope's route and tenant are not read)."""
    scope = Scope(scope.project_id, scope.service, scope.start, scope.end)
    return versions.kept("routes", scope, (q, selected, limit), lambda s: _choices(
        "routes", _params(s, service=s.service, q=q), selected, limit))


def services(scope: Scope, limit: int = 50) -> list[dict]:
    """[{"service", "requests"}] of the `limit` busiest services of the scope's project with attempts queued in its
    window, busiest first."""
    return [{"service": v["value"], "requests": v["requests"]}
            for v in service_choices(scope, limit=limit).values]


def latest_request(project_id) -> datetime | None:
    """When the project's latest stored attempt was queued (aware UTC), None when it has none."""
    [(latest,)] = client.query_rows(_sql("latest_request"), parameters={"project_id": project_id})
    if latest is None or latest.year <= 1970:
        return None
    return latest.replace(tzinfo=timezone.utc)
