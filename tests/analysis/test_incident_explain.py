"""analysis.incidents.explain: the flowchart against the baseline, causes and scope, on hand-worked traffic.

Factory traffic: 4 tenants x 4 instances x 2 routes, 20 attempts a minute, a 20-minute baseline then a 10-minute
incident. A normal attempt: t_queue 20, t_first_token 300 (tokenize 60 + network 30 + 210 model), t_stream 900
(200 output tokens: 4.5 ms/token), t_post 15 ms.
"""
import time
from datetime import datetime, timedelta, timezone

import pytest
import requests

from analysis.diagnosis.service import run_diagnosis
from analysis.diagnosis.thresholds import DEFAULT
from analysis.errors import AnalysisError
from analysis.incidents import causes, compare, scope
from analysis.incidents.explain import explain
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from ingest.pipeline import get_writer
from simulator.scenarios import PRESETS
from tests import factories as f
from tests.analysis import evidence_samples as ev
from tests.analysis.incident_traffic import bodies
from tests.fleet import post_otlp

SVC = "llm-gateway"
MIN = timedelta(minutes=1)
BASELINE = (f.BASE, f.BASE + 20 * MIN)
INCIDENT = (f.BASE + 20 * MIN, f.BASE + 30 * MIN)
TENANTS, INSTANCES, ROUTES = ("acme", "globex", "initech", "far"), ("gw-1", "gw-2", "gw-3", "gw-4"), ("/chat", "/rag")
NORMAL = {"t_queue_ms": 20.0, "prep_ms": 60.0, "network_ms": 30.0, "model_ms": 210.0, "t_stream_ms": 900.0,
          "t_post_ms": 15.0}


def _attempt(start_ns, tenant, route, timings):
    t = {**NORMAL, **timings}
    first = t["prep_ms"] + t["network_ms"] + t["model_ms"]
    parent = f.attempt(start_ns=start_ns, tenant=tenant, route=route, t_queue_ms=t["t_queue_ms"],
                       t_first_token_ms=first, t_stream_ms=t["t_stream_ms"], t_post_ms=t["t_post_ms"])
    return [parent, f.stage(parent, "tokenize", t["t_queue_ms"], t["prep_ms"]),
            f.stage(parent, "network", t["t_queue_ms"] + t["prep_ms"], t["network_ms"])]


def traffic(window, change=lambda tenant, instance, route: {}):
    """One f.request per instance: 20 attempts a minute over `window`, tenants, instances and routes in turn
    (every combination alike); change(tenant, instance, route) gives timings that differ from NORMAL."""
    start, end = window
    spans = {name: [] for name in INSTANCES}
    for i in range(int((end - start) / MIN) * 20):
        tenant, instance, route = TENANTS[i % 4], INSTANCES[(i // 4) % 4], ROUTES[(i // 16) % 2]
        at = f.BASE_NS + int((start - f.BASE).total_seconds() * 1e9) + i * 3000 * f.MS
        model = {"model_ms": NORMAL["model_ms"] + (i % 7) * 5}  # a little spread, as real traffic has
        spans[instance] += _attempt(at, tenant, route, {**model, **change(tenant, instance, route)})
    return [f.request(*s, instance=name) for name, s in spans.items()]


@pytest.fixture
def incident(alpha, ingest, clickhouse):
    """incident(change, baseline_change=None): send a baseline and an incident, then explain() the incident."""
    project, key = alpha
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")

    def go(change, baseline_change=lambda tenant, instance, route: {}):
        ingest(key, *traffic(BASELINE, baseline_change), *traffic(INCIDENT, change))
        materialize(project.id, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=2))
        return explain(project.id, SVC, *INCIDENT, *BASELINE)
    return go


def codes(result):
    return [c["code"] for c in result["causes"]]


def test_far_tenant_network_hop_is_scoped_and_diagnosed_on_its_requests(incident):
    result = incident(lambda tenant, instance, route: {"network_ms": 900.0} if tenant == "far" else {})
    # only far's attempts grew, by 870 ms each: all of the excess with a quarter of the attempts (lift 4)
    assert result["scope"] == [{"dimension": "tenant", "value": "far", "share": 1.0}]
    assert result["verdict"] == "network_overhead"
    assert result["causes"][0]["code"] == "network_overhead" and result["causes"][0]["share"] >= 0.95
    network = next(step for step in result["path"] if step["node"] == "network_share")
    # on far's own requests: 900 / (60 + 900 + ~225) = 0.76 of t_first_token, against 30 / 315 = 0.095 before
    assert network["answer"] == "yes" and 0.7 < network["value"] < 0.8 and network["baseline_value"] < 0.1
    assert network["comparison"].startswith("network share of t_first_token 7") and "vs baseline 9" in network["comparison"]
    assert {"kind": "scope", "code": "scoped_evidence", "dimension": "tenant", "value": "far"}.items() <= \
        next(x for x in result["findings"] if x["kind"] == "scope").items()
    assert result["recommendations"]


def test_steady_slow_decode_does_not_take_the_blame_for_a_network_incident(incident, alpha):
    slow = {"t_stream_ms": 57.0 * 199}  # 57 ms per output token, always
    result = incident(lambda *_: {**slow, "network_ms": 900.0}, baseline_change=lambda *_: slow)
    assert result["verdict"] == "network_overhead"
    assert codes(result) == ["network_overhead"]
    assert result["scope"] == []  # every tenant, instance, route grew alike
    decode = next(step for step in result["path"] if step["node"] == "ttft_decode")
    assert (decode["absolute_answer"], decode["answer"], decode["change"]) == ("yes", "no", "×1")
    # its fixes say why: the cause's share of the increase and the baseline comparison that said yes
    why = result["recommendations"][0]["why"]
    assert why.startswith("because network_overhead explains 100% of the increase over the baseline"), why
    assert "network share of t_first_token" in why and "vs baseline" in why, why
    # the plain diagnosis of the same window, against thresholds alone, blames the old slowness
    assert run_diagnosis(Scope(alpha[0].id, SVC, *INCIDENT))["verdict"] == "decode_throughput"


def test_two_causes_are_both_named_larger_first(incident):
    result = incident(lambda *_: {"t_queue_ms": 2500.0, "t_post_ms": 1200.0})
    # per attempt: t_queue +2480 ms, t_post +1185 ms of a 3665 ms increase -> 0.676 and 0.323
    assert result["causes"] == [{"code": "queue_backlog", "share": pytest.approx(0.676, abs=0.002)},
                                {"code": "post_processing", "share": pytest.approx(0.323, abs=0.002)}]
    assert result["verdict"] == "queue_backlog"
    queue = result["path"][0]
    assert queue["comparison"] == "t_queue p95 2.5 s vs baseline 20 ms: ×125"


def test_the_larger_cause_is_the_verdict_where_the_flowchart_stops_at_the_first(incident):
    result = incident(lambda *_: {"t_queue_ms": 1500.0, "t_post_ms": 4000.0})
    # t_queue +1480, t_post +3985: post_processing 0.729 first, though the flowchart asks about the queue first
    assert codes(result) == ["post_processing", "queue_backlog"]
    assert result["verdict"] == "post_processing"
    assert any(x["kind"] == "verdict" and x["code"] == "queue_backlog" for x in result["findings"])


def test_sick_instance_is_scoped_and_its_diluted_cause_named(incident):
    result = incident(lambda tenant, instance, route: {"t_stream_ms": 8000.0} if instance == "gw-3" else {})
    assert (result["scope"][0]["dimension"], result["scope"][0]["value"]) == ("instance", "gw-3")
    assert result["scope"][0]["share"] > 0.99
    # service-wide, decode p50 stays 4.5 ms/token: no flowchart question is yes, the decomposition names t_stream
    assert result["verdict"] == "decode_throughput" and codes(result) == ["decode_throughput"]


def test_route_with_slow_preprocessing_is_scoped_and_diagnosed(incident):
    result = incident(lambda tenant, instance, route: {"prep_ms": 900.0} if route == "/rag" else {})
    assert result["scope"] == [{"dimension": "route", "value": "/rag", "share": 1.0}]
    assert result["verdict"] == "preprocessing" and codes(result) == ["preprocessing"]
    prep = next(step for step in result["path"] if step["node"] == "prep_share")
    assert prep["answer"] == "yes" and prep["value"] > 0.7  # 900 / ~1155 on /rag alone


def test_an_unchanged_window_has_no_causes_and_no_scope(incident):
    result = incident(lambda *_: {})
    assert (result["verdict"], result["causes"], result["scope"]) == ("healthy", [], [])
    assert all(step["change"] in ("", "×1") or step["value"] is None for step in result["path"]), result["path"]


def test_an_incident_window_without_requests_is_refused(alpha, clickhouse):
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")
    with pytest.raises(AnalysisError) as caught:
        explain(alpha[0].id, SVC, *INCIDENT, *BASELINE)
    assert caught.value.reason == "unknown_service"
    with pytest.raises(AnalysisError) as caught:
        explain(alpha[0].id, SVC, INCIDENT[1], INCIDENT[0], *BASELINE)
    assert caught.value.reason == "bad_date"


# -- simulated traffic: a 25-minute phase, then a 12-minute incident phase -------------------------------------------
SLOW_DECODE = PRESETS["decode_throughput"]
PHASES = {
    "queue_backlog": (PRESETS["healthy"], PRESETS["queue_backlog"], "queue_backlog"),
    "retry_amplification": (PRESETS["healthy"], PRESETS["retry_amplification"], "retry_amplification"),
    "connection_churn": (PRESETS["healthy"], PRESETS["connection_churn"], "connection_churn"),
    "preprocessing": (PRESETS["healthy"], PRESETS["preprocessing"], "preprocessing"),
    # always slow to decode (57 ms per token), then a slow network hop on top: the network is the incident
    "steady_slow_decode_network": (SLOW_DECODE, SLOW_DECODE.with_(network_ms=650.0), "network_overhead"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(PHASES))
def test_simulated_incident_is_explained_as_its_cause(case, live_server, clickhouse, alpha):
    project, key = alpha
    before, during, expected = PHASES[case]
    base_ns = time.time_ns() - int(40 * 60e9)
    with requests.Session() as session:  # the SDK's OTLP/HTTP bodies, to the real receiver
        for body in bodies(key, "svc", [(before, 25), (during, 12)], base_ns):
            post_otlp(session, f"{live_server.url}/v1/traces", key, body)
    get_writer().flush(force=True)
    t0 = datetime.fromtimestamp(base_ns / 1e9, tz=timezone.utc)
    materialize(project.id, t0 - timedelta(hours=1), t0 + timedelta(hours=2))
    result = explain(project.id, "svc", t0 + 26 * MIN, t0 + 36 * MIN, t0 + 2 * MIN, t0 + 24 * MIN)
    assert (result["verdict"], codes(result)[0]) == (expected, expected), (result["causes"], result["path"])
    assert result["causes"][0]["share"] >= 0.5 and result["scope"] == [], result
    assert sum(c["share"] for c in result["causes"]) <= 1


# -- pure parts ---------------------------------------------------------------------------------------------------

def test_a_magnitude_must_grow_but_a_correlation_stays_absolute():
    steps = compare.compared_steps(ev.connection_churn(), ev.connection_churn(), DEFAULT)
    # the same churn before and after: new connections did not grow (answer no), the Spearman stays yes
    assert (steps["new_connections"]["absolute_answer"], steps["new_connections"]["answer"]) == ("yes", "no")
    assert steps["churn_spearman"]["answer"] == "yes" and steps["churn_spearman"]["change"] == ""
    assert compare.walk(compare.compared_steps(ev.decode_throughput(), ev.decode_throughput(), DEFAULT))[0] == "healthy"


def test_growth_from_a_baseline_that_answered_yes_needs_the_growth_factor():
    baseline = {"answer": "yes", "value": 40.0}
    assert not compare.grew(59.0, baseline) and compare.grew(60.0, baseline)  # 1.5 x 40 = 60
    assert compare.grew(1.0, {"answer": "no", "value": 0.9}) and compare.grew(1.0, {"answer": "unknown", "value": None})


def test_queue_comparison_reads_like_the_issue():
    step = compare.compare(compare.NODES["queue_p95"], ev.queue_backlog(),
                           ev.healthy(buckets__t_queue=ev.bucket(0.0, 40.0)), DEFAULT)
    assert step["comparison"] == "t_queue p95 43.6 s vs baseline 40 ms: ×1,090"  # 43600 / 40


def _sums(attempts=100, **per_attempt_ms):
    base = {"attempts": attempts, "runs": attempts, "new_first_token_n": 0, "new_first_token_sum": 0.0,
            "reused_first_token_n": attempts, "reused_first_token_sum": 0.0}
    names = ("t_queue", "t_conn", "t_first_token", "t_stream", "t_post", "t_retry", "prep", "network")
    return {**base, **{f"{n}_sum": per_attempt_ms.get(n, 0.0) * attempts for n in names}}


def test_causes_split_the_increase_and_ignore_what_shrank():
    steps = compare.compared_steps(ev.healthy(), ev.healthy(), DEFAULT)
    before = _sums(t_first_token=300, network=30, t_stream=900)
    after = _sums(t_first_token=900, network=630, t_stream=700, t_queue=200)
    # +600 network, +200 queue, -200 stream (counts 0); increase 600 (900 - 300 + 200 - 200) < positive 800
    assert causes.causes(after, before, steps) == [{"code": "network_overhead", "share": 0.75},
                                                   {"code": "queue_backlog", "share": 0.25}]
    assert causes.causes(before, before, steps) == [] and causes.causes(after, _sums(attempts=0), steps) == []


def test_cold_starts_on_new_connections_are_churn_not_prefill():
    steps = compare.compared_steps(ev.healthy(), ev.healthy(), DEFAULT)
    before = _sums(t_first_token=300)
    # half the attempts on new connections with 1300 ms first tokens, the reused half 300: +500 per attempt, churn
    after = {**_sums(t_first_token=800), "new_first_token_n": 50, "new_first_token_sum": 65000.0,
             "reused_first_token_n": 50, "reused_first_token_sum": 15000.0}
    assert causes.causes(after, before, steps) == [{"code": "connection_churn", "share": 1.0}]


def _row(dimension, value, attempts, excess, others=None):
    return {"dimension": dimension, "value": value, "incident_attempts": attempts, "excess_ms": excess,
            "positive_excess_ms": max(excess, 0.0), "others": others}


def test_scope_keeps_a_value_far_beyond_its_traffic_and_never_the_pool():
    spread = [_row("instance", f"gw-{i}", 100, 1000.0) for i in range(4)]
    assert scope.scope(spread, 10.0) == []  # each a quarter of the excess with a quarter of the attempts
    one = [_row("tenant", "far", 100, 9000.0), _row("tenant", "acme", 300, 1000.0),
           _row("tenant", "__others__", 50, 20000.0, others=30)]
    # far: 9000 of 30000 positive excess -> 0.3 < 0.5; the pool carries more but is no tenant
    assert scope.scope(one, 10.0) == []
    one[2] = _row("tenant", "__others__", 50, 100.0, others=30)
    assert scope.scope(one, 10.0) == [{"dimension": "tenant", "value": "far", "share": 0.891}]  # 9000 / 10100
    segment = [_row("segment", ">16k", 100, 9000.0), _row("segment", "<1k", 300, 100.0)]
    assert scope.scope(segment, 10.0, "prefill_pressure") == [] and scope.scope(segment, 10.0)[0]["value"] == ">16k"
    # 9000 ms over 100 attempts is 90 ms each: immaterial against a 2 s baseline TTFT (5% is 100 ms)
    assert scope.scope(segment, 2000.0) == []
