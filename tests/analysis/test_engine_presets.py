"""The engine presets, end to end on seeds the thresholds were not set on (simulate -> ingest spans and metrics ->
diagnose), and what the diagnosis says when the engine's metrics are missing."""
from datetime import timedelta

import pytest

from analysis.diagnosis.service import run_diagnosis
from analysis.scope import Scope
from tests.simulated import send_simulated

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fewer_gc_passes")]


def _diagnose(project, sent):
    result = run_diagnosis(Scope(project.id, sent.service, sent.start - timedelta(minutes=1), sent.end + timedelta(minutes=1)))
    return result, [(s["node"], s["value"], s["answer"]) for s in result["path"]]


@pytest.mark.parametrize("seed", [3, 29])
@pytest.mark.parametrize("preset", ["kv_cache_pressure", "gpu_memory_pressure", "cold_start", "batching_delay"])
def test_engine_preset_gets_its_verdict_on_held_out_seeds(preset, seed, clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base=preset, duration="20m", seed=seed, metrics=True)
    result, path = _diagnose(project, sent)
    assert result["verdict"] == preset, path
    assert result["recommendations"] and all(r["why"] for r in result["recommendations"])


def test_cold_start_is_seen_from_traces_alone(clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base="cold_start", duration="20m", seed=5)
    result, path = _diagnose(project, sent)
    assert result["verdict"] == "cold_start", path
    assert [i for i, _ in result["evidence"]["instance_starts"]] == ["llm-gateway-4"]
    assert result["evidence"]["engine"]["sources"] == []  # no metric was sent


def test_high_ttft_with_nothing_to_explain_it_says_so(clickhouse, alpha):
    """A batching delay without the engine's metrics: TTFT is high for every prompt length and nothing measured
    explains it. The verdict says what could not be checked instead of guessing prefill_pressure."""
    project, key = alpha
    sent = send_simulated(project, key, base="batching_delay", duration="20m", seed=8)
    result, path = _diagnose(project, sent)
    assert result["verdict"] == "ttft_unexplained", path
    answers = {node: answer for node, _, answer in path}
    assert answers["kv_cache"] == answers["gpu_busy"] == "unknown" and answers["prefill_ratio"] == "no"
    assert "engine's metrics" in result["recommendations"][0]["text"]


def test_a_fleet_that_sends_only_metrics_is_read_by_the_engine_reads(clickhouse, alpha):
    from analysis.reads import engine_series

    project, key = alpha
    sent = send_simulated(project, key, base="kv_cache_pressure", duration="10m", seed=2, metrics_only=True)
    engine = engine_series.summary(Scope(project.id, sent.service, sent.start, sent.end + timedelta(minutes=1)))
    assert engine.sources == ["vllm", "dcgm", "process", "kube-state"]
    assert engine.instances == 3 and engine.kv_cache_usage_p95 >= 0.9 and engine.preemptions_per_min > 1
    assert engine.restarts == 0 and engine.gpu_memory_used_share_max < 0.95
    from analysis.errors import AnalysisError

    with pytest.raises(AnalysisError, match="no requests"):  # no span: the diagnosis has no requests to judge
        run_diagnosis(Scope(project.id, sent.service, sent.start, sent.end))
