"""Across layers: a gateway's server span, its call (an attempt) and the engine's attempt under that call, in one
trace, sent by two services; the cross-layer buckets computed when attempts are materialized, whichever side
arrives first."""
from datetime import timedelta

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from analysis.reads import layers
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests import factories as f

GATEWAY, ENGINE = "chat-gw", "llm-70b"
WINDOW = (f.BASE - timedelta(minutes=5), f.BASE + timedelta(hours=1))


def request_path(start_ns: int, server_ms=1500.0, call_ms=1300.0, call_ttft_s=0.5, engine_at_ms=30.0,
                 engine_ms=1240.0, engine_ttft_s=0.45, via_http=False, engine_queue_s=0.1):
    """The gateway's server span, its GenAI call, optionally an HTTP client span, and vLLM's span under it."""
    server = f.span(name="POST /v1/chat/completions", start_ns=start_ns, duration_ms=server_ms,
                    kind=Span.SPAN_KIND_SERVER)
    call = f.span(name="chat llama-70b", start_ns=start_ns + 100 * f.MS, duration_ms=call_ms,
                  kind=Span.SPAN_KIND_CLIENT, trace_id=server.trace_id, parent=server, attributes={
                      "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "llama-70b",
                      "gen_ai.response.time_to_first_chunk": call_ttft_s})
    above = call
    extra = []
    if via_http:
        above = f.span(name="POST", start_ns=start_ns + 105 * f.MS, duration_ms=call_ms - 10, kind=Span.SPAN_KIND_CLIENT,
                       trace_id=server.trace_id, parent=call, attributes={"http.request.method": "POST"})
        extra = [above]
    engine = f.span(name="llm_request", start_ns=start_ns + int((100 + engine_at_ms) * f.MS), duration_ms=engine_ms,
                    kind=Span.SPAN_KIND_SERVER, trace_id=server.trace_id, parent=above, attributes={
                        "gen_ai.request.model": "llama-70b", "gen_ai.latency.time_in_queue": engine_queue_s,
                        "gen_ai.latency.time_to_first_token": engine_ttft_s, "gen_ai.latency.e2e": engine_ms / 1000})
    return [server, call, *extra], [engine]


def test_the_buckets_between_the_layers(alpha, ingest):
    project, key = alpha
    gw, eng = request_path(f.BASE_NS + 60 * 10**9)
    gw2, eng2 = request_path(f.BASE_NS + 120 * 10**9, via_http=True, call_ttft_s=0.8, engine_ttft_s=0.45)
    ingest(key, f.request(*gw, *gw2, service=GATEWAY), f.request(*eng, *eng2, service=ENGINE, instance="gpu-0"))
    materialize(project.id, *WINDOW)
    found = layers.for_gateway(Scope(project.id, GATEWAY, *WINDOW))
    assert (found.attempts, found.linked, found.seen_at_one_layer) == (2, 2, 0)
    [edge] = found.engines
    assert (edge.gateway, edge.engine, edge.calls, edge.instances) == (GATEWAY, ENGINE, 2, 1)
    b = found.pooled.buckets
    # t_gateway = 1500 - 1300 both times; network TTFT 500 - 450 and 800 - 450; total 1300 - 1240 both times
    assert (b["t_gateway"]["p50"], b["t_gateway"]["count"]) == (pytest.approx(200), 2)
    assert sorted([b["t_network_ttft"]["p50"], b["t_network_ttft"]["p95"]]) == [pytest.approx(50 + 0.5 * 300),
                                                                              pytest.approx(50 + 0.95 * 300)]
    assert b["t_network_total"]["p95"] == pytest.approx(60)
    # the engine side knows nothing of it: its own attempts are not calls
    assert layers.for_gateway(Scope(project.id, ENGINE, *WINDOW)).pooled is None
    assert [(e.gateway, e.engine) for e in layers.edges(project.id, *WINDOW, service=ENGINE)] == [(GATEWAY, ENGINE)]


def test_a_layer_arriving_later_is_joined_when_it_arrives_and_one_layer_is_not_zero(alpha, ingest):
    project, key = alpha
    gw, eng = request_path(f.BASE_NS + 60 * 10**9)
    ingest(key, f.request(*gw, service=GATEWAY))
    materialize(project.id, *WINDOW)
    alone = layers.for_gateway(Scope(project.id, GATEWAY, *WINDOW))
    assert (alone.attempts, alone.linked, alone.seen_at_one_layer, alone.pooled) == (1, 0, 1, None)
    assert alone.to_json()["buckets"]["t_network_ttft"] == {"p50": None, "p95": None, "count": 0}  # not 0
    ingest(key, f.request(*eng, service=ENGINE))
    materialize(project.id, *WINDOW)  # the engine's hour is dirty now; its recompute finds the call
    joined = layers.for_gateway(Scope(project.id, GATEWAY, *WINDOW))
    assert (joined.linked, joined.bucket("t_network_total")) == (1, pytest.approx(60))
    materialize(project.id, *WINDOW)  # recomputing keeps one link, not two
    assert layers.for_gateway(Scope(project.id, GATEWAY, *WINDOW)).engines[0].calls == 1


def test_without_a_server_span_t_gateway_is_not_measured(alpha, ingest):
    project, key = alpha
    gw, eng = request_path(f.BASE_NS + 60 * 10**9)
    server, call = gw
    call.ClearField("parent_span_id")
    ingest(key, f.request(call, service=GATEWAY), f.request(*eng, service=ENGINE))
    materialize(project.id, *WINDOW)
    b = layers.for_gateway(Scope(project.id, GATEWAY, *WINDOW)).pooled.buckets
    assert b["t_gateway"] == {"p50": None, "p95": None, "count": 0} and b["t_network_ttft"]["count"] == 1


def test_a_gateways_unexplained_ttft_is_named_by_the_engines_own_cause(alpha, ingest):
    """The gateway's spans see a slow first token they cannot split; the engine's own spans say it queued: the
    gateway's diagnosis names the engine's cause, with the engine as evidence (and keeps it as a finding)."""
    from analysis.diagnosis.service import run_diagnosis

    project, key = alpha
    gateway, engine = [], []
    for i in range(40):
        gw, eng = request_path(f.BASE_NS + (60 + 20 * i) * 10**9, server_ms=4200, call_ms=4000, call_ttft_s=3.05,
                               engine_ms=3940, engine_ttft_s=3.0, engine_queue_s=2.5)
        gateway += gw
        engine += eng
    ingest(key, f.request(*gateway, service=GATEWAY), f.request(*engine, service=ENGINE))
    materialize(project.id, *WINDOW)
    result = run_diagnosis(Scope(project.id, GATEWAY, *WINDOW))
    assert result["verdict"] == "queue_backlog", [(s["node"], s["answer"]) for s in result["path"]]
    assert result["engine_cause"]["service"] == ENGINE
    assert result["engine_cause"]["evidence"].startswith("t_queue p95 2.5 s is above 1 s")
    assert any(f["kind"] == "engine" and f["service"] == ENGINE for f in result["findings"])
    assert f"because engine {ENGINE}: t_queue p95" in result["recommendations"][0]["why"]
    layers_seen = result["evidence"]["layers"]
    assert layers_seen["linked"] == 40 and layers_seen["t_network_ttft_p95"] == pytest.approx(50)
    assert result["layers"] == {"role": "gateway", "calls": [ENGINE], "called_by": []}
    # the engine's own diagnosis is as it was, and knows who calls it
    engine_side = run_diagnosis(Scope(project.id, ENGINE, *WINDOW))
    assert engine_side["verdict"] == "queue_backlog"
    assert engine_side["layers"] == {"role": "engine", "calls": [], "called_by": [GATEWAY]}


def test_a_gateways_incident_names_the_engine_instance_its_excess_went_to(alpha, ingest):
    """Three engine instances behind the gateway; in the incident one of them is 3 s slower: the gateway's incident
    scope names that instance (its calls carry the excess), not the engine service all calls went to."""
    from analysis.incidents.explain import explain

    project, key = alpha
    gateway, engines = [], {f"gpu-{i}": [] for i in range(3)}
    for minute in range(40):
        slow_minutes = minute >= 30  # the incident: the last 10 minutes
        for i, j in ((i, j) for i in range(3) for j in range(3)):  # three calls a minute to each instance
            instance = f"gpu-{i}"
            slow = slow_minutes and instance == "gpu-2"
            gw, eng = request_path(f.BASE_NS + (minute * 60 + j * 20 + i * 5) * 10**9, server_ms=4600 if slow else 1600,
                                   call_ms=4300 if slow else 1300, engine_ms=4240 if slow else 1240)
            gateway += gw
            engines[instance] += eng
    ingest(key, f.request(*gateway, service=GATEWAY),
           *[f.request(*spans, service=ENGINE, instance=name) for name, spans in engines.items()])
    materialize(project.id, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=2))
    start, end = f.BASE + timedelta(minutes=30), f.BASE + timedelta(minutes=40)
    found = explain(project.id, GATEWAY, start, end, f.BASE, start)
    named = [(s["dimension"], s["value"]) for s in found["scope"]]
    assert ("engine_instance", f"{ENGINE} gpu-2") in named, found["scope"]
    assert ("engine", ENGINE) not in named  # every call went to it: no more there than in the traffic


def test_a_slow_first_token_the_healthy_engine_did_not_spend_is_the_network_between_the_layers(alpha, ingest):
    """The engine's own first token is fine (450 ms); the gateway's call waits 350 ms more for it: under
    network_share's bar of half the first token, yet nothing else is left to spend it."""
    from analysis.diagnosis.service import run_diagnosis

    project, key = alpha
    gateway, engine = [], []
    for i in range(40):
        gw, eng = request_path(f.BASE_NS + (60 + 20 * i) * 10**9, call_ttft_s=0.8, call_ms=1650, server_ms=1700,
                               engine_at_ms=175, engine_ms=1300, engine_ttft_s=0.45)
        gateway += gw
        engine += eng
    ingest(key, f.request(*gateway, service=GATEWAY), f.request(*engine, service=ENGINE))
    materialize(project.id, *WINDOW)
    result = run_diagnosis(Scope(project.id, GATEWAY, *WINDOW))
    assert run_diagnosis(Scope(project.id, ENGINE, *WINDOW))["verdict"] in ("healthy", "insufficient_data")
    assert result["verdict"] == "network_overhead", [(s["node"], s["value"], s["answer"]) for s in result["path"]]
    assert "the time between the layers is 44% of the calls' TTFT p95 (350 ms)" in result["recommendations"][0]["why"]


def test_a_gateways_prompt_length_reading_gives_way_to_its_engines_own_cause():
    """A call's first token holds the engine's cold replicas and queue too, so the calls' prompt-length ratio reads
    prefill_pressure second-hand: the engine's own cause is the verdict. A verdict of the gateway's own stays."""
    from analysis.diagnosis.service import with_engine_causes
    from analysis.evidence_types import Layers as LayerEvidence

    cold = [{"service": ENGINE, "verdict": "cold_start",
             "evidence": "share of TTFT outliers after an instance start 80% is above 50%"}]
    read = with_engine_causes({"verdict": "prefill_pressure", "findings": []}, cold, LayerEvidence())
    assert (read["verdict"], read["engine_cause"]["service"]) == ("cold_start", ENGINE)
    assert f"because engine {ENGINE}: share of TTFT outliers" in read["recommendations"][0]["why"]
    # no engine cause: the calls' own reading stays; a cause of the gateway's own stays whatever the engine says
    assert with_engine_causes({"verdict": "prefill_pressure", "findings": []}, [], LayerEvidence())["verdict"] == \
        "prefill_pressure"
    own = with_engine_causes({"verdict": "gateway_overhead", "findings": []}, cold, LayerEvidence())
    assert own["verdict"] == "gateway_overhead" and "engine_cause" not in own
    assert [f["code"] for f in own["findings"]] == ["cold_start"]  # the engine's cause, a finding
