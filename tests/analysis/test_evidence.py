"""analysis.diagnosis.evidence.collect: the typed evidence on a hand-worked fixture and on simulated presets, and its JSON."""
import json
from datetime import datetime, timedelta, timezone
from io import StringIO

import pytest
from django.core.management import call_command

from analysis.diagnosis import evidence
from analysis.diagnosis.evidence import collect
from analysis.diagnosis.service import run_diagnosis
from analysis.evidence_types import Evidence, GapFraction, InstanceGap
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from ingest.pipeline import get_writer
from tests import factories as f
from tests.analysis.test_queries import _scheduler_fixture, buckets, send  # noqa: F401 (fixtures)

DAY = timedelta(days=1)
SVC = "llm-gateway"
STATS = ["p50", "p95", "p99", "mean", "count"]
# The keys of the diagnosis answer's "evidence", in order (docs/diagnosis.md): the API, the diagnose command and
# the stored WindowDiagnosis all carry this JSON.
KEYS = {
    "window": ["start", "end", "seconds", "route", "tenant"],
    "requests": None,
    "buckets": {b: STATS for b in ["t_queue", "t_conn", "t_first_token", "t_stream", "t_post", "t_retry", "ttft",
                                   "total"]},
    "dominance": {b: ["p50_share", "p95_share", "median_request_share"]
                  for b in ["t_queue", "t_conn", "t_first_token", "t_stream", "t_post", "t_retry"]},
    "segments": {"<1k": ["count"] + [f"{b}_{lvl}" for b in ["ttft", "t_first_token", "t_queue", "t_stream", "total"]
                                     for lvl in ["p50", "p95", "p99"]]},
    "stages": ["prep_share_of_first_token", "network_share_of_first_token", "post_stage_share_of_post",
               "retrieval_ms_p50", "retrieval_ms_p95", "tool_ms_p50", "tool_ms_p95"],
    "decode": ["ms_per_output_token_p50", "ms_per_output_token_p95", "count"],
    "gap_fraction": {"service": None, "instances": {"gw-1": ["gap_fraction", "backlog_seconds", "cap"],
                                                   "gw-2": ["gap_fraction", "backlog_seconds", "cap"]},
                     "backlog_seconds": None, "source": None},
    "churn": ["windows", "new_connections_per_success", "spearman_ttft_p95", "spearman_ttft_stddev",
              "spearman_first_token_p95", "slope"],
    "tenants": [["tenant", "count", "total_p95", "total_p99", "ttft_p95", "ttft_p99", "t_queue_p95",
                 "t_queue_p99"]] * 2,
    "noisy_neighbours": [["tenant", "in_flight_share_during_backlog", "others_t_queue_p95"]] * 2,
    "retries": {"t_retry": STATS, **dict.fromkeys(["runs", "attempts", "rate", "runs_with_retries_share",
                                                   "failed_attempts"]),
                "causes": [], **dict.fromkeys(["wasted_input_tokens", "wasted_output_tokens", "wasted_tokens",
                                               "spearman_retries_queue_depth", "hidden_runs"])},
    "success_rate": None, "successful_runs_per_hour": None, "cost_per_success_usd": None,
    # issue 13: what the engine's metrics say (none sent here: every signal unknown) and the instances' starts
    "engine": {"sources": [], **dict.fromkeys(["instances", "kv_cache_usage_p95", "kv_cache_usage_max",
                                                 "preemptions_per_min", "preemption_growth", "prefix_cache_hit_rate",
                                                 "gpu_utilization_mean", "gpu_memory_used_share_max",
                                                 "gpu_memory_used_bytes_at_max", "gpu_memory_total_bytes_at_max",
                                                 "restarts"]),
               "process_starts": [], **dict.fromkeys(["queue_depth_mean", "queue_empty_share", "in_flight_mean"])},
    "instance_starts": [], "cold_start_share": None,
    # across layers: this service calls no traced engine
    "layers": {**dict.fromkeys(["linked", "seen_at_one_layer", "t_gateway_p50", "t_gateway_p95", "t_network_ttft_p50",
                                "t_network_ttft_p95", "t_network_total_p50", "t_network_total_p95", "gateway_share",
                                "network_share_of_ttft"]), "engines": []},
}


def keys(data):
    """The key structure of some JSON, in order: a dict of plain values is a list of its keys."""
    if isinstance(data, list):
        return [keys(item) for item in data]
    if not isinstance(data, dict):
        return None
    if not data or all(not isinstance(v, (dict, list)) for v in data.values()):
        return list(data)
    return {k: keys(v) for k, v in data.items()}


@pytest.fixture
def scheduler(send):
    """alice's project id, with test_queries' scheduler fixture: two instances, four attempts."""
    return send(*_scheduler_fixture())


def test_collect_pools_gap_fraction_over_instances(scheduler):
    ev = collect(Scope(scheduler, SVC, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=1)))
    # gw-1: 1 of 2 backlog seconds under cap -> 0.5; gw-2: 2 of 2 -> 1.0; pooled 3 of 4 -> 0.75
    assert ev.gap_fraction == GapFraction(service=0.75, backlog_seconds=4.0, instances={
        "gw-1": InstanceGap(gap_fraction=0.5, backlog_seconds=2.0, cap=1),
        "gw-2": InstanceGap(gap_fraction=1.0, backlog_seconds=2.0, cap=2)})
    # t_queue 0, 1000, 1000, 2000 -> p50 1000, p95 1000 + 0.85 x 1000 = 1850
    assert (ev.requests, ev.buckets.t_queue.p50, ev.buckets.t_queue.p95) == (4, 1000, pytest.approx(1850))
    # totals 2000, 2000, 2000, 3000 -> p95 2000 + 0.85 x 1000 = 2850; 1850 / 2850
    assert ev.dominance.t_queue.p95_share == pytest.approx(1850 / 2850)
    assert [(n.tenant, n.in_flight_share_during_backlog, n.others_t_queue_p95) for n in ev.noisy_neighbours] == [
        ("acme", 1.0, 1000), ("globex", 0.0, 1900)]
    # the spans name no run (llm.run.id / llm.attempt / resend_count): the retry rate is unknown, not 0
    assert (ev.success_rate, ev.retries.rate, ev.retries.causes) == (1.0, None, {})
    assert ev.successful_runs_per_hour == 2.0  # 4 runs over 2 hours
    assert ev.stages.prep_share_of_first_token is None  # no stage spans: unknown, not 0


def test_the_json_of_the_diagnosis_evidence_keeps_its_keys(scheduler):
    answer = run_diagnosis(Scope(scheduler, SVC, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=1)))
    body = json.loads(json.dumps(answer))  # JSON-ready as it is
    assert keys(body["evidence"]) == KEYS
    assert json.dumps(keys(body["evidence"])) == json.dumps(KEYS)  # and in the same order
    # read back (a stored WindowDiagnosis), the JSON gives the same evidence and the same JSON
    again = Evidence.from_json(body["evidence"])
    assert again.to_json() == body["evidence"] and again.gap_fraction.instances["gw-1"].cap == 1


def test_collect_on_an_empty_window_says_unknown_not_zero(send, beta):
    send(f.request(f.attempt()))
    other, _ = beta
    ev = collect(Scope(other.id, SVC, f.BASE - DAY, f.BASE + DAY))  # bob sees none of alice's requests
    assert ev.requests == 0 and ev.gap_fraction.service is None and ev.success_rate is None
    assert ev.buckets.total.p50 is None and ev.churn.new_connections_per_success is None
    assert ev.decode.ms_per_output_token_p50 is None and ev.retries.rate is None
    assert ev.dominance.t_queue.p95_share is None
    data = json.loads(json.dumps(ev.to_json()))
    assert (data["dominance"], data["segments"], data["tenants"]) == ({}, {}, [])  # the JSON of today
    assert data["gap_fraction"] == {"service": None, "instances": {}, "backlog_seconds": 0.0, "source": "traces"}
    assert Evidence.from_json(data) == ev


def test_from_json_refuses_a_misspelt_key_and_reads_missing_ones_as_unknown():
    with pytest.raises(TypeError, match="gap_fractoin"):
        Evidence.from_json({"gap_fractoin": {"service": 0.9}})
    with pytest.raises(TypeError, match="p59"):
        Evidence.from_json({"buckets": {"t_queue": {"p59": 1.0}}})
    ev = Evidence.from_json({"buckets": {"t_queue": {"p95": 1.0}}})
    assert (ev.buckets.t_queue.p95, ev.buckets.t_queue.p50, ev.buckets.t_queue.count) == (1.0, None, 0)
    with pytest.raises(AttributeError):
        ev.buckets.t_queue.p59  # noqa: B018


def test_noisy_neighbours_shape_the_rows_they_are_given():
    # acme holds 3 of 4 slot seconds during backlog, globex 1; only acme's others' t_queue was measured
    rows = [{"tenant": "acme", "in_flight_backlog_ms": 3000.0}, {"tenant": "globex", "in_flight_backlog_ms": 1000.0}]
    assert evidence.noisy_candidates(rows) == ["acme", "globex"]
    shaped = evidence.noisy_neighbours(rows, {"acme": 800.0})
    assert [(n.tenant, n.in_flight_share_during_backlog, n.others_t_queue_p95) for n in shaped] == [
        ("acme", 0.75, 800.0), ("globex", 0.25, None)]
    idle = [{"tenant": "acme", "in_flight_backlog_ms": 0.0}]  # no backlog: nothing to query, nothing to shape
    assert evidence.noisy_candidates(idle) == [] and evidence.noisy_neighbours(idle, {}) == []


def _simulate(live_server, project, key, scenario):
    """20 simulated minutes of a preset sent over HTTP, materialized; returns collect() over them."""
    call_command("simulate", scenario=scenario, duration="20m", endpoint=f"{live_server.url}/v1/traces",
                 key=key, seed=7, stdout=StringIO())
    get_writer().flush(force=True)
    now = datetime.now(timezone.utc)  # the simulated time ended at (about) now
    materialize(project.id, now - timedelta(hours=1), now + timedelta(minutes=10))
    return collect(Scope(project.id, SVC, now - timedelta(minutes=30), now + timedelta(minutes=10)))


@pytest.mark.slow
def test_admission_gap_shows_idle_slots_under_backlog(live_server, alpha, buckets):
    project, key = alpha
    ev = _simulate(live_server, project, key, "admission_gap")
    assert ev.requests > 1000
    assert ev.gap_fraction.service > 0.5


@pytest.mark.slow
def test_queue_backlog_keeps_slots_busy_under_backlog(live_server, alpha, buckets):
    project, key = alpha
    ev = _simulate(live_server, project, key, "queue_backlog")
    assert ev.gap_fraction.backlog_seconds > 60
    assert ev.gap_fraction.service < 0.2
