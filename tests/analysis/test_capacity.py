"""The capacity worksheet on hand-built traffic (tests/analysis/capacity_spans.py), numbers worked out by hand; the
knee and headroom on hand-made load levels; the objective's sources; nulls with their reasons."""
import time
from datetime import datetime, timedelta, timezone

import pytest
from django.test import override_settings
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from analysis.capacity import build, document
from analysis.capacity.load import curve
from analysis.capacity.objectives import Objective, objective
from analysis.capacity.reads import Level
from analysis.errors import AnalysisError
from analysis.rollups.materialize import materialize
from budgets.models import Budget, StageTarget
from ingest import metrics
from tests import factories as f
from tests.analysis import capacity_spans as spans

GW1_SECONDS = 60 + 41.235  # minute 10:00 whole; minute 10:05 up to its last release at 10:05:41.235
GW2_SECONDS = 31.235  # minute 10:02 from 10:02:00 to its last release at 10:02:31.235
IN_FLIGHT_MS = 1215  # admitted (20 ms after queued) to released (1,235 ms after)


@pytest.fixture
def sent(alpha, ingest):
    project, key = alpha
    ingest(key, *spans.requests())
    materialize(project.pk, spans.START - timedelta(hours=1), spans.END + timedelta(hours=1))
    return project


@override_settings(GPU_HOUR_PRICE_USD=3.0)
def test_worksheet_numbers_worked_by_hand(sent):
    doc = document(sent.pk, spans.SERVICE, spans.START, spans.END)
    assert doc["unit"] == "runs" and doc["counts"] == {"runs": 11, "attempts": 11, "attempts_per_run": 1.0}
    # 6 runs began in 10:00; the 11 runs span 10:00:00 to 10:05:40: 10 gaps in 340 s
    assert (doc["peak_rps"], doc["peak_at"]) == (pytest.approx(6 / 60), "2026-01-05T10:00:00Z")
    assert doc["mean_rps"] == pytest.approx(10 / 340)
    # 9 runs of 800 and 2 of 1,800 tokens in: p95 at rank 9.5 of 0..10 lies between the two 1,800s
    assert doc["tokens_in"] == {"mean": pytest.approx(10_800 / 11), "p95": 1800, "count": 11}
    assert doc["tokens_out"] == {"mean": 200, "p95": 200, "count": 11}
    assert doc["instances"] == 2
    # gw-1 on 2 GPUs (gpu.count), gw-2 on 1 (assumed)
    hours = (GW1_SECONDS * 2 + GW2_SECONDS) / 3600
    assert doc["gpu_hours"] == pytest.approx(hours)
    assert doc["gpus"] == {"per_instance": {"min": 1, "max": 2},
                           "sources": {"assumed 1": 1, "gpu.count resource attribute": 1}}
    # in flight over the 3 busy instance-minutes: 11 attempts x 1,215 ms
    assert (doc["batching_source"], doc["batching_factor"]) == ("scheduler", pytest.approx(11 * IN_FLIGHT_MS / 180_000))
    assert doc["cost_per_1k_requests_usd"] == pytest.approx(3.0 * hours / 11 * 1000)
    assert any("1 GPU each assumed" in note for note in doc["notes"])


def test_regions_from_the_resource(sent):
    regions = {r["region"]: r for r in document(sent.pk, spans.SERVICE, spans.START, spans.END)["regions"]}
    assert set(regions) == {"us-east-1", "eu-west-1"}
    east, west = regions["us-east-1"], regions["eu-west-1"]
    assert (east["counts"]["runs"], east["peak_rps"], east["mean_rps"]) == (9, pytest.approx(0.1), pytest.approx(8 / 340))
    assert (east["instances"], east["gpu_hours"]) == (1, pytest.approx(GW1_SECONDS * 2 / 3600))
    assert east["batching_factor"] == pytest.approx(9 * IN_FLIGHT_MS / 120_000)
    assert (west["counts"]["runs"], west["peak_rps"], west["mean_rps"]) == (2, pytest.approx(2 / 60), pytest.approx(1 / 30))
    assert west["tokens_in"]["mean"] == 1800 and west["gpu_hours"] == pytest.approx(GW2_SECONDS / 3600)
    assert west["reasons"]["cost_per_1k_requests_usd"] == "no GPU-hour price configured (set GPU_HOUR_PRICE_USD)"


def test_a_wider_window_counts_the_same(sent):
    """Neither the mean nor the GPU-hours are diluted by a window reaching past the traffic."""
    wide = document(sent.pk, spans.SERVICE, spans.START - timedelta(minutes=30), spans.END + timedelta(hours=1))
    exact = document(sent.pk, spans.SERVICE, spans.START, spans.END)
    for key in ("peak_rps", "mean_rps", "gpu_hours", "batching_factor", "instances", "tokens_in"):
        assert wide[key] == exact[key], key


def test_unknown_is_null_with_a_reason(sent):
    doc = document(sent.pk, spans.SERVICE, spans.START, spans.END)
    assert doc["cost_per_1k_requests_usd"] is None
    assert doc["reasons"]["cost_per_1k_requests_usd"] == "no GPU-hour price configured (set GPU_HOUR_PRICE_USD)"
    # 11 attempts over 3 instance-minutes: no load level has the 20 values a percentile is judged on
    curve_ = doc["latency_vs_load"]
    assert curve_["knee_load"] is None and curve_["headroom"] is None
    assert doc["reasons"]["knee_load"].startswith("no load level has 20 TTFT values")
    assert curve_["objective"]["source"] == "diagnosis threshold" and curve_["objective"]["threshold_ms"] == 600


def test_no_tokens_no_regions_no_admission(alpha, ingest):
    """Spans without token counts, cloud.region or an admitted event: those fields are null, each with its reason."""
    project, key = alpha
    bare = [f.span(start_ns=spans.at(s), duration_ms=1000, events={"queued": 0, "first_token": 400},
                   attributes={"gen_ai.request.model": "m", "llm.route": "/v1/chat"}) for s in range(0, 60, 5)]
    ingest(key, f.request(*bare, service="bare"))
    materialize(project.pk, spans.START - timedelta(hours=1), spans.END + timedelta(hours=1))
    doc = document(project.pk, "bare", spans.START, spans.END)
    assert doc["counts"]["runs"] == 12 and doc["peak_rps"] == pytest.approx(12 / 60)
    for field in ("tokens_in", "tokens_out"):
        assert doc[field] == {"mean": None, "p95": None, "count": 0} and field in doc["reasons"]
    assert doc["batching_factor"] is None and doc["batching_source"] is None
    assert doc["reasons"]["batching_factor"].startswith("no scheduler or engine running gauge in the window")
    assert doc["regions"] == [] and "cloud.region" in doc["reasons"]["regions"]
    assert doc["latency_vs_load"]["measure"] == "rps"  # no admission instants, no running gauge


def _running(service: str, instance: str, values: list[float], t0_ns: int) -> dict:
    points = [{"timeUnixNano": str(t0_ns + k * 10 * 10**9), "asDouble": v} for k, v in enumerate(values)]
    return {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}},
                                        {"key": "service.instance.id", "value": {"stringValue": instance}}]},
            "scopeMetrics": [{"metrics": [{"name": "vllm:num_requests_running", "gauge": {"dataPoints": points}}]}]}


def test_batching_from_the_engine_running_gauge(alpha, ingest):
    """Without admission instants the engine's running gauge gives the batching factor (samples above 0) and the
    load measure; its samples count as the instance being up."""
    project, key = alpha
    t0 = time.time_ns() - 1800 * 10**9
    start = datetime.fromtimestamp(t0 / 1e9, timezone.utc).replace(second=0, microsecond=0)
    bare = [f.span(start_ns=t0 + k * 10**9, duration_ms=1000, events={"queued": 0, "first_token": 400},
                   attributes={"gen_ai.request.model": "m"}) for k in range(30)]
    ingest(key, f.request(*bare, service="vllm", instance="a"))
    request = ExportMetricsServiceRequest()
    # running 0, 4, 6, 0, 8 ten seconds apart: the samples above 0 average 6
    json_format.ParseDict({"resourceMetrics": [_running("vllm", "a", [0, 4, 6, 0, 8], t0)]}, request)
    metrics.spool_metrics(project.id, request.SerializeToString())
    metrics.get_writer().flush(force=True)
    materialize(project.pk, start - timedelta(hours=1), start + timedelta(hours=1))
    doc = document(project.pk, "vllm", start, start + timedelta(minutes=10))
    assert (doc["batching_source"], doc["batching_factor"]) == ("engine running gauge", 6.0)
    assert doc["latency_vs_load"]["measure"] == "running"
    assert any("running gauge" in note for note in doc["notes"])


def test_unknown_service_and_bad_windows(sent):
    with pytest.raises(AnalysisError) as missing:
        document(sent.pk, "nope", spans.START, spans.END)
    assert (missing.value.reason, missing.value.status) == ("unknown_service", 404)
    with pytest.raises(AnalysisError, match="'service' is required"):
        document(sent.pk, "", spans.START, spans.END)
    with pytest.raises(AnalysisError) as reversed_:
        document(sent.pk, spans.SERVICE, spans.END, spans.START)
    assert reversed_.value.reason == "bad_date"
    # build itself never refuses: an empty window is zeros and nulls with reasons
    empty = build(sent.pk, "nope", spans.START, spans.END)
    assert (empty.worksheet.runs, empty.worksheet.peak_rps, empty.reasons["peak_rps"]) == (
        0, None, "no request began in the window")


def test_bob_sees_nothing_of_alices_service(sent, beta):
    with pytest.raises(AnalysisError) as other:
        document(beta[0].pk, spans.SERVICE, spans.START, spans.END)
    assert other.value.reason == "unknown_service"


# --- the knee and the headroom, on hand-made levels ------------------------------------------------------------------
BUDGET_1S = Objective("ttft", 95, 1000.0, "latency budget", "chat")


def _levels(p95s: list[float], minutes: int = 10, values: int = 40) -> list[Level]:
    """Levels at loads 1, 2, 3 ... with these TTFT p95s (ms)."""
    return [Level(i, minutes, float(i + 1), {"ttft": {"q": {50: v / 2, 90: v * 0.9, 95: v, 99: v * 1.2},
                                                      "count": values, "minutes": minutes},
                                             "total": {"q": dict.fromkeys((50, 90, 95, 99)), "count": 0, "minutes": 0}})
            for i, v in enumerate(p95s)]


def test_knee_interpolated_where_the_percentile_reaches_the_objective():
    # loads 1..8; p95 700 ms at load 6 and 1,500 at 7: 1 s at 6 + 300 / 800 = 6.375
    c = curve("in_flight", _levels([200, 220, 250, 300, 400, 700, 1500, 5000]), {1: 3.0, 2: 4.0}, BUDGET_1S)
    assert c.knee_load == pytest.approx(6.375) and c.peak_load == 4.0
    assert c.headroom == pytest.approx(6.375 / 4 - 1)
    # levels 6 and 7 lie within 15 % of the knee: 20 instance-minutes
    assert (c.minutes_near_knee, c.confidence) == (20, "medium")
    assert c.sentence == ("peak used 63% of the load at which TTFT p95 reaches 1 s (6.38 sequences in flight per "
                          "instance): +59% traffic before a breach; seen for 20 instance-minutes near that load "
                          "(medium confidence)")


def test_a_spike_at_low_load_is_not_the_knee():
    c = curve("in_flight", _levels([200, 1800, 250, 300, 400, 700, 1500, 5000]), {1: 4.0}, BUDGET_1S)
    assert c.knee_load == pytest.approx(6.375)


def test_past_the_knee_at_peak():
    c = curve("rps", _levels([200, 300, 1400, 3000]), {1: 3.5}, BUDGET_1S)
    # 1 s between load 2 (300 ms) and 3 (1,400 ms): 2 + 700 / 1,100 = 2.64; the peak 3.5 is 133 % of it
    assert c.knee_load == pytest.approx(2 + 700 / 1100)
    assert c.headroom < 0 and c.sentence.startswith("peak reached 133% of the load at which TTFT p95 reaches 1 s")
    assert "requests/s per instance" in c.sentence


def test_never_reached_gives_a_lower_bound_and_always_over_says_so():
    under = curve("in_flight", _levels([200, 300, 400, 500]), {1: 2.0}, BUDGET_1S)
    assert under.knee_load is None and under.headroom_at_least == pytest.approx(4 / 2 - 1)
    assert under.sentence == ("TTFT p95 stayed under 1 s at every load seen, up to 4 sequences in flight per "
                              "instance: at least +100% traffic before a breach")
    over = curve("in_flight", _levels([1200, 1300, 2000]), {1: 2.0}, BUDGET_1S)
    assert over.knee_load is None and "over 1 s at every load seen" in over.reason


def test_levels_with_few_values_are_shown_not_judged():
    c = curve("in_flight", _levels([200, 300, 5000], values=5), {1: 1.0}, BUDGET_1S)
    assert c.knee_load is None and len(c.levels) == 3 and c.reason.startswith("no load level has 20 TTFT values")


# --- where the objective comes from ------------------------------------------------------------------------------------
def test_objective_from_the_budget_else_the_diagnosis_threshold(alpha):
    project, _ = alpha
    assert objective(project.pk, "chat") == Objective("ttft", 95, 600.0, "diagnosis threshold", "ttft_p95_ms")
    everywhere = Budget.objects.create(project=project, service="chat", route="", total_ms=4000, percentile=99)
    assert objective(project.pk, "chat") == Objective("total", 99, 4000.0, "latency budget", "chat")
    route = Budget.objects.create(project=project, service="chat", route="/v1/chat", total_ms=2500, name="seed-003")
    StageTarget.objects.create(budget=route, stage="ttft", target_ms=1000)
    assert objective(project.pk, "chat", "/v1/chat") == Objective("ttft", 95, 1000.0, "latency budget", "seed-003")
    assert objective(project.pk, "chat", "/v1/other").threshold_ms == everywhere.total_ms


def test_gpu_count_as_a_double_or_a_string(alpha, ingest):
    project, key = alpha
    ingest(key, f.request(f.attempt(start_ns=spans.at(0)), service="g", instance="a", resource={"gpu.count": 4.0}),
           f.request(f.attempt(start_ns=spans.at(1)), service="g", instance="b", resource={"gpu.count": "2"}))
    materialize(project.pk, spans.START - timedelta(hours=1), spans.END + timedelta(hours=1))
    gpus = document(project.pk, "g", spans.START, spans.END)["gpus"]
    assert gpus == {"per_instance": {"min": 2, "max": 4}, "sources": {"gpu.count resource attribute": 2}}
