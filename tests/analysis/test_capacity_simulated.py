"""The capacity worksheet against simulated traffic whose truth is known: rates, tokens, instances, regions and GPUs
worked out from the simulated runs themselves (tests/analysis/capacity_traffic.py), never hard-coded. Tolerances:
rates, GPU-hours and the batching factor ±5 %, token means ±2 %, instances exact. The knee is checked against the
simulator's cap and against its own attempts on either side of it."""
import statistics
from collections import defaultdict
from dataclasses import replace
from datetime import timedelta

import pytest
from django.test import override_settings

from analysis.capacity import document
from budgets.models import Budget, StageTarget
from simulator.scenarios import PRESETS
from tests.analysis.capacity_traffic import MINUTE_NS, send

pytestmark = pytest.mark.slow
RATE, TOKENS = 0.05, 0.02
REGIONS = ("us-east-1", "eu-west-1")


def _close(measured, truth, tolerance):
    assert measured == pytest.approx(truth, rel=tolerance), (measured, truth)


def _check_scope(scope: dict, sent, region=None):
    _close(scope["peak_rps"], sent.peak_rps(region), RATE)
    _close(scope["mean_rps"], sent.mean_rps(region), RATE)
    _close(scope["tokens_in"]["mean"], sent.tokens_in_mean(region), TOKENS)
    _close(scope["tokens_out"]["mean"], sent.tokens_out_mean(region), TOKENS)
    assert scope["instances"] == len(sent.instances(region))
    _close(scope["gpu_hours"], sent.gpu_hours(region), RATE)


@override_settings(GPU_HOUR_PRICE_USD=2.4)
def test_worksheet_matches_the_generated_traffic(alpha, clickhouse):
    """Four instances in two regions on 4 GPUs each (DCGM series per GPU), with the engine's metrics."""
    project, key = alpha
    scenario = PRESETS["healthy"].with_(instances=4, regions=REGIONS, gpus=4)
    sent = send(project, key, scenario, 20 * 60, seed=3)
    doc = document(project.pk, sent.service, sent.start, sent.end)
    _check_scope(doc, sent)
    assert doc["gpus"]["sources"] == {"DCGM gpu label": 4} and doc["gpus"]["per_instance"] == {"min": 4, "max": 4}
    _close(doc["batching_factor"], sent.batching_factor(), RATE)
    assert doc["batching_source"] == "scheduler"
    # retries are attempts, not requests: the unit is the run
    attempts = sum(len(r.attempts) for r in sent.runs)
    assert doc["unit"] == "runs" and doc["counts"]["attempts"] > doc["counts"]["runs"]
    _close(doc["counts"]["attempts"] / doc["counts"]["runs"], attempts / len(sent.runs), 0.01)
    assert doc["cost_per_1k_requests_usd"] == pytest.approx(2.4 * doc["gpu_hours"] / doc["counts"]["runs"] * 1000)
    regions = {r["region"]: r for r in doc["regions"]}
    assert set(regions) == set(REGIONS)
    for region in REGIONS:
        _check_scope(regions[region], sent, region)


def test_gpu_count_and_traffic_minutes_without_engine_metrics(alpha, clickhouse):
    """No engine metrics: instances are up for the minutes they had traffic; GPUs from the gpu.count resource
    attribute. A window reaching well past the traffic on both sides gives the same numbers."""
    project, key = alpha
    scenario = PRESETS["steady_slow"].with_(regions=("ap-south-1",), gpu_count=8)
    sent = send(project, key, scenario, 20 * 60, seed=5, metrics=False, ends_before=timedelta(minutes=15))
    wide = document(project.pk, sent.service, sent.start - timedelta(minutes=20), sent.end + timedelta(minutes=12))
    for doc in (document(project.pk, sent.service, sent.start, sent.end), wide):
        _check_scope(doc, sent)
        assert doc["gpus"]["sources"] == {"gpu.count resource attribute": scenario.instances}
        assert [r["region"] for r in doc["regions"]] == ["ap-south-1"]
        _close(doc["regions"][0]["gpu_hours"], doc["gpu_hours"], 1e-9)


def test_knee_found_near_the_simulators_capacity(alpha, clickhouse):
    """Traffic climbing in steps past what 2 instances with 8 slots each serve: TTFT p95 crosses the budget's 1 s
    below the cap (queues form before a minute's mean reaches it), and the simulator's own attempts agree: under 1 s
    in the instance-minutes clearly below the knee, over it clearly above."""
    project, key = alpha
    base = PRESETS["healthy"]
    stairs = tuple((0.1 * i, 0.1, 1 + 0.3 * i) for i in range(1, 10))
    scenario = base.with_(rps=0.9, instances=2, cap=8, timeout_s=600.0,
                          tenants=tuple(replace(t, bursts=stairs) for t in base.tenants))
    budget = Budget.objects.create(project=project, service="llm-gateway", total_ms=30_000, name="chat")
    StageTarget.objects.create(budget=budget, stage="ttft", target_ms=1000)
    sent = send(project, key, scenario, 40 * 60, seed=7, metrics=False)
    c = document(project.pk, sent.service, sent.start, sent.end)["latency_vs_load"]
    assert (c["measure"], c["objective"]["source"], c["objective"]["metric"]) == ("in_flight", "latency budget", "ttft")
    assert c["cap"] == 8 and 0.5 * 8 <= c["knee_load"] <= 8, c
    assert c["minutes_near_knee"] >= 10 and c["confidence"] in ("medium", "high")
    assert "the load at which TTFT p95 reaches 1 s" in c["sentence"]
    below, above = _sim_ttft_p95_by_side(sent, c["knee_load"])
    assert below < 1000 < above, (below, above)


def _sim_ttft_p95_by_side(sent, knee: float) -> tuple[float, float]:
    """TTFT p95 (ms) of the simulator's successful attempts in instance-minutes whose mean in flight is under 0.8 x
    the knee, and over 1.2 x it: the model's own instants, not the store's."""
    in_flight, ttft = defaultdict(float), defaultdict(list)
    for run in sent.runs:
        for a in run.attempts:
            if a.admitted is None:
                continue
            begin, end = sent.ns(a.admitted), sent.ns(a.released or a.end)
            m = begin // MINUTE_NS
            while m * MINUTE_NS < end:
                in_flight[(a.instance, m)] += min(end, (m + 1) * MINUTE_NS) - max(begin, m * MINUTE_NS)
                m += 1
            if a.status == "ok" and a.first_token is not None:
                ttft[(a.instance, sent.ns(a.start) // MINUTE_NS)].append(a.first_token - a.start)
    sides = ([], [])
    for key, values in ttft.items():
        load = in_flight[key] / MINUTE_NS
        if load < 0.8 * knee or load > 1.2 * knee:
            sides[load > knee].extend(values)
    return tuple(statistics.quantiles(side, n=20)[-1] for side in sides)
