"""The review's run and attempt figures against what the simulator says it sent (real OTLP export)."""
import re
from datetime import datetime, timedelta, timezone
from io import StringIO

import pytest
from django.core.management import call_command

from analysis.rollups.materialize import materialize
from ingest.pipeline import get_writer
from reports import build, weeks

pytestmark = pytest.mark.slow


def test_retry_waste_matches_the_simulators_own_totals(live_server, clickhouse, alpha):
    project, key = alpha
    out = StringIO()
    call_command("simulate", scenario="retry_amplification", duration="10m", endpoint=f"{live_server.url}/v1/traces",
                 key=key, seed=5, stdout=out)
    runs, attempts = map(int, re.search(r"(\d+) runs, (\d+) attempts", out.getvalue()).groups())
    assert attempts > runs > 0  # the preset does retry
    get_writer().flush(force=True)
    now = datetime.now(timezone.utc)
    materialize(project.pk, now - timedelta(hours=2), now + timedelta(minutes=5))
    # the simulated 10 minutes end now; near a Monday midnight they straddle two ISO weeks: add both
    names = {weeks.name((now - timedelta(minutes=11)).date()), weeks.name(now.date())}
    found_runs = found_extra = 0
    for name in names:
        for service in build.build(project, name)["services"]:
            found_runs += service["retries"]["runs"]
            found_extra += service["retries"]["extra_attempts"]
    assert (found_runs, found_extra) == (runs, attempts - runs)
