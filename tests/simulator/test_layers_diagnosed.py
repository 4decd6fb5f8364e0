"""Two layers end to end (issue 35 item 5): the simulator's gateway in front of its engine, in one trace, over several
seeds and each cause, sent through the real ingest path and materialized; the gateway's diagnosis names the cause
(docs/simulator.md "Two layers", docs/cross-layer.md)."""

import pytest

from analysis.diagnosis.service import run_diagnosis
from analysis.scope import Scope
from simulator.scenarios import LAYERED_PRESETS, PRESETS
from tests.analysis.test_incident_accuracy import materialize_all
from tests.simulated import send_simulated

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fewer_gc_passes")]
SEEDS = (1, 2, 3)
MINUTES = 15
# the cause injected -> where it is: at the gateway (its own time), between the layers, or in the engine, which the
# gateway's diagnosis names with the engine as evidence (engine_cause) or finds in its own calls (decode) and then also
# lists as the engine's finding. The engine sends its metrics too (KV cache, GPU, process starts), as vLLM does.
CAUSES = {"healthy": "gateway", "gateway_overhead": "gateway", "network_overhead": "between",
          "queue_backlog": "engine", "admission_gap": "engine", "prefill_pressure": "engine",
          "decode_throughput": "engine", "kv_cache_pressure": "engine", "batching_delay": "engine",
          "cold_start": "engine"}


def _base(cause: str):
    return LAYERED_PRESETS.get(cause) or PRESETS[cause]


def _path(result):
    return [(s["node"], s["value"], s["answer"]) for s in result["path"]]


def _engine_named(result, cause: str, engine: str) -> bool:
    named = result.get("engine_cause") or {}
    return (named.get("service"), named.get("verdict")) == (engine, cause) or any(
        f["kind"] == "engine" and f["service"] == engine and f["code"] == cause for f in result["findings"])


def test_the_gateways_verdict_names_each_cause_across_seeds(clickhouse, alpha):
    project, key = alpha
    sent = {}
    for n, (cause, where) in enumerate(CAUSES.items()):
        # TRICKY: a seed gives the span ids too, so each case has seeds of its own: two cases of one seed in one
        # project would share trace ids, and the layers would link one case's gateway to another's engine
        for seed in (10 * n + s for s in SEEDS):
            service = f"{cause.replace('_', '-')}-{seed}"
            sent[cause, where, seed, service] = send_simulated(
                project, key, base=_base(cause), duration=f"{MINUTES}m", seed=seed, service=service, layers=True,
                metrics=True, materialized=False)
    materialize_all(project, sent.values())  # once for every case (per send, it redid every earlier one)
    right, cases = 0, []
    for (cause, where, seed, service), window in sent.items():
        gateway, engine = f"{service}-gateway", f"{service}-engine"
        result = run_diagnosis(Scope(project.id, gateway, window.start, window.end))
        ok = result["verdict"] == cause and (where != "engine" or _engine_named(result, cause, engine))
        right += ok
        cases.append((cause, seed, result["verdict"], result.get("engine_cause"), ok, None if ok else _path(result)))
        print(cases[-1])
    assert right >= 0.9 * len(cases), cases
    assert all(ok for cause, *_, ok, _ in cases if cause == "healthy"), cases


@pytest.mark.parametrize("cause", ["gateway_overhead", "network_overhead"])
def test_an_incident_between_or_in_the_layers_is_the_gateways_verdict_over_its_window(cause, clickhouse, alpha):
    """On the healthy base at two layers, the incident's window is diagnosed as its cause and the 15 minutes before
    it as healthy, at the gateway; the engine stays healthy throughout."""
    project, key = alpha
    sent = send_simulated(project, key, base="healthy", duration="30m", incidents=[f"{cause}@15m+15m"], seed=9,
                          service="edge", layers=True)
    incident = sent.incidents[0]
    during = run_diagnosis(Scope(project.id, "edge-gateway", incident.onset, incident.end))
    before = run_diagnosis(Scope(project.id, "edge-gateway", sent.start, incident.onset))
    assert during["verdict"] == cause, _path(during)
    assert before["verdict"] == "healthy", _path(before)
    assert run_diagnosis(Scope(project.id, "edge-engine", incident.onset, incident.end))["verdict"] == "healthy"
    assert during["layers"] == {"role": "gateway", "calls": ["edge-engine"], "called_by": []}


def test_a_simulated_run_is_drawn_at_both_layers_with_the_network_between_them(clickhouse, alpha):
    from analysis.reads import runs
    from dashboard import waterfall

    project, key = alpha
    sent = send_simulated(project, key, base="network_overhead", duration="2m", seed=5, service="edge", layers=True)
    run_id = runs.search(project.id, sent.start, sent.end, service="edge-gateway")[0]["run_id"]
    attempts = runs.attempts(project.id, run_id, sent.start, sent.end, service="edge-gateway")
    spans = runs.spans(project.id, [a["trace_id"] for a in attempts], attempts[0]["start_ns"],
                       max(a["released_ns"] or a["start_ns"] for a in attempts))
    attempts, below = runs.layered(project.id, attempts, spans)
    rows = {r["label"]: [s["group"] for s in r["segments"]] for r in waterfall.layout(attempts, spans, below)["rows"]}
    # the gateway's server span, its call, the engine's span under it with its buckets, and the hop on either side
    assert len(below) == 1 and {"POST /v1/chat/completions", "llm_request", "edge-engine buckets"} <= set(rows)
    assert rows["network"] == ["network (between layers)"] * 2
