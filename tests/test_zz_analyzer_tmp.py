"""Throw-away: planning time of the heavy statements with the new analyzer vs the old one."""
import statistics, time
from datetime import datetime, timedelta, timezone

from analysis.rollups import aggregates
from analysis.rollups.materialize import HOUR
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client
from tests import factories as f


def _t(sql, params, settings, n=7, command=True):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        (client.command if command else client.query_rows)(sql, parameters=params, settings=settings)
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


import pytest


@pytest.mark.django_db
def test_planning(alpha, ingest, clickhouse):
    alpha, key = alpha
    hour = datetime(2026, 1, 5, 10, tzinfo=timezone.utc)
    ns = int(hour.timestamp() * 1e9)
    ingest(key, f.request(*[f.attempt(start_ns=ns + i * 10**9) for i in range(50)], service="svc"))
    lo = utc_naive(hour); hi = lo + HOUR
    params = {"project_id": alpha.pk, "start": lo, "end": hi, "computed_at": utc_naive(datetime.now(timezone.utc))}
    for name in ("materialize_request_buckets",):
        for s in ({}, {"enable_analyzer": 0}):
            try:
                print(name, s, f"{_t(_sql(name), params, s):.1f} ms")
            except Exception as e:
                print(name, s, "ERR", str(e)[:200])
