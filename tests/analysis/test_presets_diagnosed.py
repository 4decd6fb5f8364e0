"""Every simulator preset, sent through the real pipeline, is diagnosed as its own verdict."""
from datetime import timedelta

import pytest

from analysis.diagnosis.service import run_diagnosis
from analysis.scope import Scope
from simulator.scenarios import PRESETS
from tests.simulated import send_simulated

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fewer_gc_passes")]
# noisy_tenant is not a verdict code: its queue is a backlog, and the tenant shows up as a finding; steady_slow
# (slow first tokens and slow decode, all the time) is diagnosed as its cause, decode_throughput
EXPECTED = {name: ("queue_backlog" if name == "noisy_tenant" else PRESETS[name].cause) for name in PRESETS}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_preset_is_diagnosed_as_its_cause(preset, clickhouse, alpha):
    project, key = alpha
    # spans and the engine's metrics, as the simulate command sends them (its OTLP/HTTP hop is
    # tests/simulator/test_simulate_command.py's): the traffic generated once a machine and replayed after
    # (tests/simulated.py), where generating it through the SDK every run was most of this file's 88 CPU-s
    sent = send_simulated(project, key, base=preset, duration="20m", seed=11, metrics=True)
    start, end = sent.start - timedelta(minutes=5), sent.end + timedelta(minutes=5)
    result = run_diagnosis(Scope(project.id, "llm-gateway", start, end))
    path = [(step["node"], step["value"], step["answer"]) for step in result["path"]]
    assert result["verdict"] == EXPECTED[preset], path
    if preset == "noisy_tenant":
        assert any("bulkcorp" in str(finding) for finding in result["findings"]), result["findings"]
    if preset == "healthy":
        assert result["findings"] == [], result["findings"]
