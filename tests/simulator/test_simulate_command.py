"""`manage.py simulate`: its errors, its formats, and a preset's spans arriving through a live server."""
from datetime import datetime, timedelta, timezone
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from analysis.scope import Scope
from ingest.grpc_server import build_server
from ingest.pipeline import get_writer
from simulator.model import simulate
from simulator.scenarios import PRESETS
from tests.helpers import attempts


@pytest.fixture
def captured(monkeypatch):
    """The command's exporter replaced by an in-memory one: what it would send, without a server."""
    exporter = InMemorySpanExporter()
    monkeypatch.setattr("simulator.management.commands.simulate.make_exporter", lambda endpoint, key, protocol: exporter)
    metric_batches = exporter.metric_batches = []  # and the engine's metrics, kept in memory as well

    class Metrics:
        def export(self, data, **kwargs):
            metric_batches.append(data)

    monkeypatch.setattr("simulator.management.commands.simulate.make_metric_exporter", lambda *args: Metrics())
    return exporter


def test_unknown_scenario_is_refused_with_the_choices():
    with pytest.raises(CommandError, match=r"invalid choice: 'slow_model'.*healthy"):
        call_command("simulate", scenario="slow_model", key="k")


def test_a_duration_in_words_is_refused_with_examples():
    with pytest.raises(CommandError, match=r"duration must look like 90s, 30m or 1h, got 'ten minutes'"):
        call_command("simulate", scenario="healthy", duration="ten minutes", key="k")


def test_without_a_key_or_a_demo_key_it_says_how_to_get_one(settings, tmp_path):
    settings.DATA_DIR = tmp_path  # a data dir where `make run` never wrote demo_key
    with pytest.raises(CommandError, match=r"no --key given and no demo key.*make run"):
        call_command("simulate", scenario="healthy", duration="1m")


@pytest.mark.slow  # runs a preset through the simulator
def test_the_demo_key_is_used_when_no_key_is_given(settings, tmp_path, captured):
    settings.DATA_DIR = tmp_path
    (tmp_path / "demo_key").write_text("demo-key\n")
    call_command("simulate", scenario="healthy", duration="1m", stdout=StringIO())
    assert captured.get_finished_spans()


@pytest.mark.slow  # runs a preset through the simulator
def test_vllm_format_sends_only_llm_request_spans(captured):
    out = StringIO()
    call_command("simulate", scenario="decode_throughput", duration="10m", format="vllm", key="k", seed=2, stdout=out)
    spans = captured.get_finished_spans()
    assert {s.name for s in spans} == {"llm_request"}
    assert all("gen_ai.latency.e2e" in s.attributes for s in spans)
    assert out.getvalue().startswith("decode_throughput: ")
    assert f"{len(spans)} spans sent" in out.getvalue()
    # the engine's metrics went too: one batch per instance, named as vLLM names them
    names = {m.name for data in captured.metric_batches for rm in data.resource_metrics for sm in rm.scope_metrics
             for m in sm.metrics}
    assert len(captured.metric_batches) == 3 and "vllm:num_requests_running" in names


@pytest.mark.slow  # runs a preset through the simulator
def test_simulated_arrivals_end_now(captured):
    call_command("simulate", scenario="healthy", duration="10m", key="k", stdout=StringIO())
    now_ns = datetime.now(timezone.utc).timestamp() * 1e9
    # a run's root span starts at its arrival; retries and long streams may end after the last arrival
    arrivals = [s.start_time for s in captured.get_finished_spans() if s.name == "chat.handle"]
    # ten simulated minutes, the last of them ending as the command ran (a few seconds of slack for the run)
    assert now_ns - 10 * 60e9 - 10e9 < min(arrivals) < now_ns - 9.9 * 60e9
    assert now_ns - 60e9 < max(arrivals) < now_ns


def _model_attempts(scenario: str, duration_s: float, seed: int) -> dict:
    """(run id, attempt) -> t_queue ms, as the model produces them for this seed."""
    runs = simulate(PRESETS[scenario], duration_s, seed=seed, service="llm-gateway")
    return {(r.id, a.number): (a.admitted if a.admitted is not None else a.queued) - a.queued
            for r in runs for a in r.attempts}


def _assert_stored_as_modelled(project_id, expected: dict):
    get_writer().flush(force=True)
    now = datetime.now(timezone.utc)  # the command's simulated time ended at (about) now
    rows = attempts(project_id, now - timedelta(hours=1), now + timedelta(hours=1))
    assert len(rows) == len(expected)
    stored = {(r["run_id"], r["attempt"]): r["t_queue_ms"] for r in rows}
    assert stored.keys() == expected.keys()
    for key, t_queue in expected.items():
        assert stored[key] == pytest.approx(t_queue, abs=0.01), key
    return rows


@pytest.mark.slow
def test_queue_backlog_spans_arrive_over_http_as_the_model_made_them(live_server, clickhouse, alpha):
    project, key = alpha
    # 5 simulated minutes of queue_backlog: ~1,000 runs, ~7,500 spans
    call_command("simulate", scenario="queue_backlog", duration="5m", endpoint=f"{live_server.url}/v1/traces",
                 key=key, seed=3, stdout=StringIO())
    rows = _assert_stored_as_modelled(project.id, _model_attempts("queue_backlog", 300, seed=3))
    waited = sum(1 for r in rows if r["t_queue_ms"] > 0)
    assert waited > 0.5 * len(rows)  # the backlog shows: 75% of attempts waited (healthy: none)
    assert {r["cap"] for r in rows} == {PRESETS["queue_backlog"].cap}


@pytest.mark.slow
def test_admission_gap_spans_arrive_over_grpc_as_the_model_made_them(transactional_db, clickhouse, alpha):
    project, key = alpha
    server, port = build_server("127.0.0.1", 0)
    server.start()
    try:
        call_command("simulate", scenario="admission_gap", duration="2m", endpoint=f"127.0.0.1:{port}",
                     protocol="grpc", key=key, seed=5, stdout=StringIO())
    finally:
        server.stop(grace=None)
    rows = _assert_stored_as_modelled(project.id, _model_attempts("admission_gap", 120, seed=5))
    assert sum(1 for r in rows if r["t_queue_ms"] > 0) > 0.2 * len(rows)  # 45% waited behind a stall


# -- incidents -------------------------------------------------------------------------------

def test_without_a_scenario_or_an_incident_it_asks_for_one():
    with pytest.raises(CommandError, match=r"give --scenario, or --incident"):
        call_command("simulate", key="k")


@pytest.mark.parametrize("options, message", [
    ({"incident": ["slow_gpu@1m+1m"]}, r"unknown incident cause 'slow_gpu'"),
    ({"incident": ["network_overhead@1m+ten"]}, r"duration must look like 90s, 30m or 1h, got 'ten'"),
    ({"incident": ["network_overhead@40m+20m"], "duration": "30m"}, r"outside the run \(0s to 1800s\)"),
    ({"incident": ["network_overhead@1m+1m"], "scope": "region=eu"}, r"unknown scope dimension 'region'"),
    ({"incident": ["network_overhead@1m+1m:instance=gw-9"]}, r"no instance 'gw-9' in this run \(it has llm-gateway-1"),
])
def test_a_bad_incident_is_refused_before_anything_is_sent(options, message, captured):
    with pytest.raises(CommandError, match=message):
        call_command("simulate", key="k", **options)
    assert not captured.get_finished_spans()


@pytest.mark.slow  # runs the simulator
def test_scoped_incidents_reach_only_their_traffic(captured):
    out = StringIO()
    call_command("simulate", incident=["network_overhead@1m+2m:tenant=acme", "post_processing@1m+2m"],
                 scope="route=/v1/completions", duration="4m", key="k", stdout=out)
    assert out.getvalue().startswith("healthy + network_overhead@60s+120s:tenant=acme + "
                                     "post_processing@60s+120s:route=/v1/completions: ")
    spans = captured.get_finished_spans()
    base_ns = min(s.start_time for s in spans)
    during = lambda s: 70e9 < s.start_time - base_ns < 170e9  # noqa: E731
    by_id = {s.context.span_id: s for s in spans}
    hops = {}
    for s in spans:
        if s.name == "network" and during(s):
            tenant = by_id[s.parent.span_id].attributes["tenant.id"]
            hops.setdefault(tenant == "acme", []).append((s.end_time - s.start_time) / 1e6)
    median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    assert median(hops[True]) > 400 > max(hops[False])  # acme's hop ~660 ms, everyone else's ~12
    posts = {}
    for s in spans:
        if s.name == "post" and during(s):
            route = by_id[s.parent.span_id].attributes["llm.route"]
            posts.setdefault(route == "/v1/completions", []).append((s.end_time - s.start_time) / 1e6)
    assert median(posts[True]) > 1000 > max(posts[False])


# -- two layers ------------------------------------------------------------------------------

@pytest.mark.slow  # runs a preset through the simulator
def test_layers_send_the_gateway_its_calls_and_the_engine_under_them_in_one_trace(captured):
    out = StringIO()
    call_command("simulate", scenario="network_overhead", layers=True, service="chat", duration="2m", key="k", seed=3,
                 stdout=out)
    spans = captured.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    service = {s.context.span_id: s.resource.attributes["service.name"] for s in spans}
    assert set(service.values()) == {"chat-gateway", "chat-engine"}
    assert not [s for s in spans if "llm.stage" in s.attributes]  # no stage spans at either layer
    engines = [s for s in spans if s.name == "llm_request"]
    calls = [s for s in spans if s.name.startswith("chat ")]
    assert engines and len(calls) >= len(engines)
    for engine in engines:
        call = by_id[engine.parent.span_id]
        assert service[engine.context.span_id] == "chat-engine" and service[call.context.span_id] == "chat-gateway"
        assert call.context.trace_id == engine.context.trace_id
        # the network (662 ms median, half each way) lies between them, on the way out and on the way back
        assert call.start_time < engine.start_time and engine.end_time < call.end_time
        server = by_id[call.parent.span_id]
        assert (server.kind.name, server.name, server.parent) == ("SERVER", "POST " + call.attributes["llm.route"], None)
        # the gateway's call does not see the engine's queue: no admission instant
        assert {e.name for e in call.events} == {"queued", "first_token", "last_token", "released"}
    assert "network_overhead at two layers (chat-gateway, chat-engine)" in out.getvalue()
    # the engine's metrics are the engine's
    names = {rm.resource.attributes["service.name"] for data in captured.metric_batches for rm in data.resource_metrics}
    assert names == {"chat-engine"}


@pytest.mark.parametrize("options, message", [
    ({"scenario": "gateway_overhead"}, r"--scenario gateway_overhead needs two layers: add --layers"),
    ({"incident": ["gateway_overhead@1m+1m"]}, r"gateway_overhead needs two layers \(--layers\)"),
    ({"scenario": "healthy", "layers": True, "format": "vllm"}, r"--layers sends its own forms"),
    ({"incident": ["queue_backlog@1m+1m:instance=llm-gateway-1"], "layers": True},
     r"no instance 'llm-gateway-1' in this run \(it has llm-engine-1"),
])
def test_what_needs_two_layers_is_refused_without_them(options, message, captured):
    with pytest.raises(CommandError, match=message):
        call_command("simulate", key="k", duration="30m", **options)
    assert not captured.get_finished_spans()


@pytest.mark.slow
def test_layers_over_grpc_are_linked_call_by_call(transactional_db, clickhouse, alpha):
    from analysis.reads import layers
    from analysis.rollups.materialize import materialize

    project, key = alpha
    server, port = build_server("127.0.0.1", 0)
    server.start()
    try:
        call_command("simulate", scenario="healthy", layers=True, service="edge", duration="2m",
                     endpoint=f"127.0.0.1:{port}", protocol="grpc", key=key, seed=6, no_metrics=True, stdout=StringIO())
    finally:
        server.stop(grace=None)
    get_writer().flush(force=True)
    runs = list(simulate(PRESETS["healthy"], 120, seed=6, service="edge", layers=True))
    served = sum(1 for r in runs for a in r.attempts if a.status == "ok")  # the calls the engine answered
    now = datetime.now(timezone.utc)
    materialize(project.id, now - timedelta(hours=1), now + timedelta(hours=1))
    found = layers.for_gateway(Scope(project.id, "edge-gateway", now - timedelta(minutes=5), now + timedelta(minutes=5)))
    assert (found.attempts, found.linked) == (sum(len(r.attempts) for r in runs), served)
    assert [e.engine for e in found.engines] == ["edge-engine"]
    # the healthy hop: 12 ms median out and back; the gateway's own 6 ms (and a run's retrieval and tool time)
    assert 5 < found.bucket("t_network_ttft", "p50") < 25 and found.bucket("t_gateway", "p50") < 100
