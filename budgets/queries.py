"""The one ClickHouse read of budgets: a percentile of total and of every stage over a window."""
from functools import lru_cache
from pathlib import Path

from analysis.windows import utc_naive
from analysis.stats import finite
from budgets.stages import PERCENTILES, STAGES, TOTAL
from store import client

SQL = Path(__file__).parent / "sql" / "stage_percentiles.sql"


@lru_cache(maxsize=None)
def _sql() -> str:
    return SQL.read_text()


def stage_percentiles(project_id, service, start, end, percentile=95, route="") -> dict:
    """{"requests": attempts, "total" | stage code: {"value": ms or None, "count": requests with a value}}
    for the attempts of one service (and route, "" = all) queued in [start, end)."""
    if percentile not in PERCENTILES:
        raise ValueError(f"percentile must be one of {PERCENTILES}, got {percentile!r}")
    params = {"project_id": project_id, "service": service, "start": utc_naive(start), "end": utc_naive(end),
              "route": route, "level": percentile / 100}
    [row] = client.query(_sql(), parameters=params)
    out = {"requests": int(row["requests"])}
    for code in (TOTAL, *STAGES):
        count = int(row[f"{code}_n"])
        out[code] = {"value": finite(row[f"{code}_q"]) if count else None, "count": count}
    return out
