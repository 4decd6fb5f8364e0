"""What the emitter sends: the same spans for the same seed, and vLLM's own form with --format vllm."""
import pytest

from simulator.scenarios import PRESETS
from tests.simulator import signatures as sg

pytestmark = pytest.mark.slow  # both run presets through the simulator
MS = 1_000_000


def fingerprint(spans):
    """Everything a receiver sees of each span, in export order."""
    return [
        (s.name, s.context.trace_id, s.context.span_id, s.parent.span_id if s.parent else None, s.start_time,
         s.end_time, s.status.status_code, dict(s.attributes), [(e.name, e.timestamp) for e in s.events],
         dict(s.resource.attributes))
        for s in spans
    ]


def test_the_same_seed_sends_identical_spans_and_another_seed_different_ones():
    # 3 simulated minutes of retry_amplification (~900 runs, with failed attempts and retries)
    scenario = PRESETS["retry_amplification"]
    first, _ = sg.capture(scenario, 180, seed=7)
    again, _ = sg.capture(scenario, 180, seed=7)
    other, _ = sg.capture(scenario, 180, seed=8)
    assert len(first) > 5000
    assert fingerprint(first) == fingerprint(again)
    assert {s.context.span_id for s in first}.isdisjoint({s.context.span_id for s in other})
    assert [s.start_time for s in first[:100]] != [s.start_time for s in other[:100]]


def test_vllm_form_has_latencies_in_seconds_matching_the_native_instants():
    # 5 minutes of queue_backlog: its first burst builds a queue, so time_in_queue is often > 0
    scenario, seed = PRESETS["queue_backlog"], 4
    native = {(r.run_id, r.attempt): r for r in sg.records(sg.capture(scenario, 300, seed=seed)[0])}
    vllm, _ = sg.capture(scenario, 300, seed=seed, fmt="vllm")

    # vLLM traces only requests it served: one llm_request span per successful attempt, no stage spans
    assert {s.name for s in vllm} == {"llm_request"}
    assert len(vllm) == sum(1 for r in native.values() if r.ok)
    queued_somewhere = 0
    for s in vllm:
        a = s.attributes
        run_id, _, attempt = a["gen_ai.request.id"].rpartition("-")
        r = native[(run_id, int(attempt))]
        assert "tenant.id" not in a and "tenant.id" not in s.resource.attributes and "llm.stage" not in a
        assert (s.start_time - sg.BASE_NS) / MS == pytest.approx(r.queued, abs=1e-3)  # span start = arrival
        assert (s.end_time - sg.BASE_NS) / MS == pytest.approx(r.released, abs=1e-3)
        # seconds since arrival, the same instants as the native events (to the nanosecond)
        assert a["gen_ai.latency.time_in_queue"] * 1000 == pytest.approx(r.admitted - r.queued, abs=1e-3)
        assert a["gen_ai.latency.time_to_first_token"] * 1000 == pytest.approx(r.first_token - r.queued, abs=1e-3)
        assert a["gen_ai.latency.e2e"] * 1000 == pytest.approx(r.last_token - r.queued, abs=1e-3)
        assert (a["gen_ai.usage.prompt_tokens"], a["gen_ai.usage.completion_tokens"]) == (r.input_tokens, r.output_tokens)
        queued_somewhere += a["gen_ai.latency.time_in_queue"] > 0
    assert queued_somewhere > 0.2 * len(vllm)
