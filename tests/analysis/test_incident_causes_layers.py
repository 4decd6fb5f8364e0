"""The split of a gateway's latency increase across layers (analysis/incidents/causes.py layered()): pure, on
stage sums worked out by hand. The end-to-end version is tests/analysis/test_incident_layers.py."""
from analysis.diagnosis.thresholds import DEFAULT
from analysis.incidents import causes, compare
from tests.analysis.evidence_samples import healthy
from tests.analysis.test_incident_explain import _sums

STEPS = compare.compared_steps(healthy(), healthy(), DEFAULT)
NAMES = ("t_queue", "t_conn", "t_first_token", "t_stream", "t_post", "t_retry", "prep", "network")


def _links(attempts=100, engine="llm-engine", t_gateway=10.0, t_network_total=20.0, call=None, **engine_ms):
    """One layer_stage_sums row: `attempts` calls, all linked, the per-call ms given (the engine's by bucket)."""
    call = call or {}
    row = {"engine_service": engine, "links": attempts, "attempts": attempts, "runs": attempts,
           "t_gateway_sum": t_gateway * attempts, "t_network_total_sum": t_network_total * attempts,
           "new_first_token_n": 0, "new_first_token_sum": 0.0, "reused_first_token_n": 0,
           "reused_first_token_sum": 0.0, "decode_stream_sum": 0.0, "decode_tokens_sum": 0.0}
    row.update({f"call_{n}_sum": call.get(n, 0.0) * attempts for n in NAMES if n != "t_retry"})
    return row | {f"{n}_sum": engine_ms.get(n, 0.0) * attempts for n in NAMES}


def test_an_engines_queue_is_the_engines_cause_not_the_calls_prefill():
    # the gateway's calls: no admission instant, so their first token is in no bucket; stream 1000, post 10 per call,
    # all of it the calls' own parts, which the layers replace
    gateway = _sums(t_stream=1000, t_post=10)
    call = {"t_stream": 1000, "t_post": 10}
    before = _links(call=call, t_first_token=200, t_stream=950)
    # the engine's queue +3000 ms per call, the gateway's own time +1000 ms: 3000 / 4000 and 1000 / 4000
    after = _links(call=call, t_gateway=1010, t_queue=3000, t_first_token=200, t_stream=950)
    asked = []
    found = causes.layered(gateway, gateway, STEPS, ([after], [before]), "chat-gw", lambda e: asked.append(e) or {})
    assert found == [{"code": "queue_backlog", "share": 0.75, "layer": "engine", "service": "llm-engine"},
                     {"code": "gateway_overhead", "share": 0.25, "layer": "gateway", "service": "chat-gw"}]
    assert asked == ["llm-engine"]  # its queue grew: the engine's own steps name its cause


def test_the_hop_between_the_layers_is_the_network_to_that_engine():
    gateway = _sums(t_stream=1000)
    before = _links(call={"t_stream": 1000}, t_first_token=200, t_stream=950)
    # +650 ms between the layers (the call's total minus the engine's), the engine unchanged: all of it network
    after = _links(call={"t_stream": 1000}, t_network_total=670, t_first_token=200, t_stream=950)
    found = causes.layered(gateway, gateway, STEPS, ([after], [before]), "chat-gw", lambda e: {})
    assert found == [{"code": "network_overhead", "share": 1.0, "layer": "network", "service": "llm-engine"}]


def test_idle_slots_at_the_engine_make_its_queue_an_admission_gap():
    gateway = _sums()
    idle = {"idle_slots": {"answer": "yes"}}
    found = causes.layered(gateway, gateway, STEPS, ([_links(t_queue=800)], [_links()]), "chat-gw", lambda e: idle)
    assert found == [{"code": "admission_gap", "share": 1.0, "layer": "engine", "service": "llm-engine"}]


def test_nothing_grown_across_the_layers_is_no_cause():
    gateway = _sums(t_stream=1000)
    same = _links(call={"t_stream": 1000}, t_first_token=200, t_stream=950)
    assert causes.layered(gateway, gateway, STEPS, ([same], [same]), "chat-gw", lambda e: {}) == []
    assert causes.layered(gateway, _sums(attempts=0), STEPS, ([same], []), "chat-gw", lambda e: {}) == []
