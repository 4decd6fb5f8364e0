"""The simulated engine's metrics: they follow the model (running and waiting are its in-flight and queue), they
carry each engine preset's signature, and the healthy preset trips none of the engine nodes."""
import pytest

from simulator.engine_metrics import EngineMetrics
from simulator.model import simulate
from simulator.scenarios import PRESETS

pytestmark = pytest.mark.slow


def _metrics(name: str, seed: int = 1, minutes: int = 20):
    scenario = PRESETS[name]
    engine = EngineMetrics(scenario, "llm-gateway", 0, 0.0, minutes * 60)
    runs = list(simulate(scenario, minutes * 60, seed=seed))
    for run in runs:
        engine.observe(run)
    return engine, runs


def _all(engine, name):
    return [values[name] for index in engine.attempts for _, values in engine.samples(index)]


def test_running_and_waiting_are_the_models_in_flight_and_queue():
    engine, runs = _metrics("queue_backlog", minutes=5)
    attempts = [a for r in runs for a in r.attempts if a.instance == 0]
    for t, values in engine.samples(0)[::5]:
        running = sum(1 for a in attempts if a.admitted is not None and a.admitted <= t < a.end)
        waiting = sum(1 for a in attempts if a.start <= t < (a.admitted if a.admitted is not None else a.end))
        assert (values["vllm:num_requests_running"], values["vllm:num_requests_waiting"]) == (running, waiting)
        assert values["vllm:num_requests_running"] <= PRESETS["queue_backlog"].cap
    assert max(_all(engine, "vllm:num_requests_waiting")) > 0


def test_counters_only_grow_and_fractions_stay_fractions():
    engine, _ = _metrics("kv_cache_pressure", minutes=5)
    for index in engine.attempts:
        samples = engine.samples(index)
        for name in ("vllm:num_preemptions_total", "vllm:prefix_cache_queries_total"):
            series = [v[name] for _, v in samples]
            assert series == sorted(series)
        assert all(0 <= v["vllm:kv_cache_usage_perc"] <= 1 for _, v in samples)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_engine_preset_carries_its_signature(seed):
    kv, _ = _metrics("kv_cache_pressure", seed)
    usage = sorted(_all(kv, "vllm:kv_cache_usage_perc"))
    assert usage[int(0.95 * len(usage))] >= 0.9 and max(_all(kv, "vllm:num_preemptions_total")) > 0
    memory, _ = _metrics("gpu_memory_pressure", seed)
    used, free = _all(memory, "DCGM_FI_DEV_FB_USED"), _all(memory, "DCGM_FI_DEV_FB_FREE")
    assert max(u / (u + f) for u, f in zip(used, free)) >= 0.95
    assert max(_all(memory, "kube_pod_container_status_restarts_total")) >= 1
    batching, _ = _metrics("batching_delay", seed)
    util, waiting = _all(batching, "DCGM_FI_DEV_GPU_UTIL"), _all(batching, "vllm:num_requests_waiting")
    assert sum(util) / len(util) >= 85 and sum(w < 0.5 for w in waiting) / len(waiting) >= 0.8
    cold, _ = _metrics("cold_start", seed)
    starts = {index: cold.samples(index)[0][1]["process_start_time_seconds"] for index in cold.attempts}
    assert starts[3] - starts[0] == pytest.approx(600.0)  # the fourth replica starts 10 minutes in


@pytest.mark.parametrize("seed", [1, 2])
def test_oom_kills_restart_the_engines_with_no_headroom(seed):
    engine, _ = _metrics("oom_kills", seed)
    used, free = _all(engine, "DCGM_FI_DEV_FB_USED"), _all(engine, "DCGM_FI_DEV_FB_FREE")
    assert max(u / (u + f) for u, f in zip(used, free)) >= 0.98
    assert max(_all(engine, "kube_pod_container_status_restarts_total")) >= 1


def test_healthy_metrics_trip_none_of_the_engine_nodes():
    engine, _ = _metrics("healthy")
    usage = sorted(_all(engine, "vllm:kv_cache_usage_perc"))
    assert max(_all(engine, "vllm:num_preemptions_total")) == 0 and usage[int(0.95 * len(usage))] < 0.9
    assert max(_all(engine, "kube_pod_container_status_restarts_total")) == 0
    util = _all(engine, "DCGM_FI_DEV_GPU_UTIL")
    assert sum(util) / len(util) < 85
