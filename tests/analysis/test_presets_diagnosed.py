"""Every simulator preset, sent through the real pipeline, is diagnosed as its own verdict."""
from datetime import datetime, timedelta, timezone

import pytest
from django.core.management import call_command

from analysis.diagnosis.service import run_diagnosis
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from ingest import metrics
from ingest.pipeline import get_writer
from simulator.scenarios import PRESETS

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fewer_gc_passes")]
# noisy_tenant is not a verdict code: its queue is a backlog, and the tenant shows up as a finding; steady_slow
# (slow first tokens and slow decode, all the time) is diagnosed as its cause, decode_throughput
EXPECTED = {name: ("queue_backlog" if name == "noisy_tenant" else PRESETS[name].cause) for name in PRESETS}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_preset_is_diagnosed_as_its_cause(preset, live_server, clickhouse, alpha):
    project, key = alpha
    # spans and the engine's metrics (the simulate command sends both)
    call_command("simulate", scenario=preset, duration="20m", endpoint=f"{live_server.url}/v1/traces", key=key, seed=11)
    get_writer().flush(force=True)
    metrics.get_writer().flush(force=True)
    now = datetime.now(timezone.utc)
    start, end = now - timedelta(minutes=25), now + timedelta(minutes=5)
    materialize(project.id, start - timedelta(hours=1), end)
    result = run_diagnosis(Scope(project.id, "llm-gateway", start, end))
    path = [(step["node"], step["value"], step["answer"]) for step in result["path"]]
    assert result["verdict"] == EXPECTED[preset], path
    if preset == "noisy_tenant":
        assert any("bulkcorp" in str(finding) for finding in result["findings"]), result["findings"]
    if preset == "healthy":
        assert result["findings"] == [], result["findings"]
