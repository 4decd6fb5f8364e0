"""Two ISO weeks of alpha traffic with known numbers, plus the alerts receiver and the dashboard members."""
from datetime import timedelta

import pytest

from analysis.rollups.materialize import materialize
from tests import factories as f
from tests import stored
from tests.alerts.conftest import json_hook  # noqa: F401 (fixture)
from tests.dashboard.conftest import ann_client, members  # noqa: F401 (fixtures)

WEEK1, WEEK2 = "2026-W02", "2026-W03"  # f.BASE is Monday 2026-01-05 10:00 UTC, in W02
WEEK_MS = 7 * 86_400_000
HOSTILE_TENANT = '<script>alert("t")</script>'
ERROR = f.Status.STATUS_CODE_ERROR


def at(ms: float) -> int:
    return f.BASE_NS + int(ms * f.MS)


@pytest.fixture
def weeks(members, ingest):
    """alpha-svc: week 1, 10 attempts of TTFT 310 / total 1225 ms; week 2, TTFT 610..700 step 10 (total + 900 + 15),
    half of them by HOSTILE_TENANT, the first 2 on new connections. retry-svc, week 2: one run of 2 attempts (the first timed out)."""
    _, alpha, key = members["ann"]

    def build():
        week1 = [f.attempt(t_queue_ms=10, t_first_token_ms=300, start_ns=at(i * 1000), tenant="acme")
                 for i in range(10)]
        week2 = [f.attempt(t_queue_ms=10, t_first_token_ms=600 + 10 * i, start_ns=at(WEEK_MS + i * 1000),
                           tenant=HOSTILE_TENANT if i % 2 else "acme", reused=i >= 2) for i in range(10)]
        run = [f.attempt(start_ns=at(WEEK_MS + 60_000), status_code=ERROR,
                         attributes={"llm.run.id": "r1", "llm.attempt": 1, "llm.retry.cause": "timeout"}),
               f.attempt(start_ns=at(WEEK_MS + 62_000), attributes={"llm.run.id": "r1", "llm.attempt": 2})]
        ingest(key, f.request(*week1, *week2, service="alpha-svc"), f.request(*run, service="retry-svc"))
        # the hours that hold spans (each week's first minutes), not the 16 days around them: a day's empty hours
        # cost as much to materialize and aggregate as full ones (~25 s for the 16 days)
        for week in (f.BASE, f.BASE + timedelta(days=7)):
            materialize(alpha.pk, week, week + timedelta(hours=1))
    # built once per worker and copied for the next tests (~1 s a test to ingest, materialize and aggregate: the
    # setup of 15 of tests/reports' 24 tests, 2026-11-29)
    stored.once("reports_weeks", (alpha,), build)
    return alpha
