"""Read queries of the dashboard that the analysis app does not already answer; one .sql file each.

Same conventions as analysis.queries: one project's attempts queued in [start, end), durations in ms,
None where a value is undefined.
"""
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from analysis.windows import utc_naive
from analysis.stats import finite
from store import client

SQL_DIR = Path(__file__).parent / "sql"


@lru_cache(maxsize=None)
def sql(name: str) -> str:
    return (SQL_DIR / f"{name}.sql").read_text()


def params(project_id, start, end, **more) -> dict:
    return {"project_id": project_id, "start": utc_naive(start), "end": utc_naive(end), **more}


def services(project_id, start, end) -> list[dict]:
    """[{"service", "requests"}] with attempts started in the window, busiest first."""
    rows = client.query(sql("services"), parameters=params(project_id, start, end))
    return [{"service": r["service"], "requests": int(r["requests"])} for r in rows]


def routes(project_id, service, start, end) -> list[str]:
    """The service's routes in the window, sorted (at most 1000)."""
    rows = client.query_rows(sql("routes"), parameters=params(project_id, start, end, service=service))
    return [route for (route,) in rows]


def latest_request(project_id) -> datetime | None:
    """When the project's latest stored attempt was queued (aware UTC), None when it has none."""
    [(latest,)] = client.query_rows(sql("latest_request"), parameters={"project_id": project_id})
    if latest is None or latest.year <= 1970:
        return None
    return latest.replace(tzinfo=timezone.utc)


def overview_series(project_id, service, start, end, width_ms: int, route="", tenant="") -> list[dict]:
    """[{"at" (aware UTC), "requests", "errors", "ttft": {p50, p95, p99}, "total": {...}}] per time bucket."""
    rows = client.query(sql("overview_series"), parameters=params(
        project_id, start, end, service=service, route=route, tenant=tenant, width_ms=width_ms))
    out = []
    for r in rows:
        point = {"at": datetime.fromtimestamp(r["bucket_ms"] / 1000, tz=timezone.utc),
                 "requests": int(r["requests"]), "errors": int(r["errors"])}
        for name in ("ttft", "total"):
            known = r[f"{name}_count"] > 0
            point[name] = {level: finite(q) if known else None for level, q in zip(("p50", "p95", "p99"), r[f"{name}_q"])}
        out.append(point)
    return out
