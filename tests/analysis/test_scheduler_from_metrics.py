"""Scheduler state from the engine's gauges: gap_fraction and queue depth where the traces carry no
queued/admitted events, and agreement with the traces' exact sweep where both exist (simulated traffic)."""
import time
from datetime import datetime, timedelta, timezone

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from analysis.reads import engine_series, queries
from analysis.scope import Scope
from ingest import metrics
from tests.simulated import send_simulated


def _gauges(service, instance, samples, t0_ns):
    """samples: [(waiting, running)] 10 s apart."""
    def points(i):
        return [{"timeUnixNano": str(t0_ns + k * 10 * 10**9), "asDouble": float(s[i])} for k, s in enumerate(samples)]
    return {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}},
                                        {"key": "service.instance.id", "value": {"stringValue": instance}}]},
            "scopeMetrics": [{"metrics": [{"name": "vllm:num_requests_waiting", "gauge": {"dataPoints": points(0)}},
                                          {"name": "vllm:num_requests_running", "gauge": {"dataPoints": points(1)}}]}]}


def test_gap_fraction_from_hand_built_gauges(clickhouse, alpha):
    project, _ = alpha
    t0 = time.time_ns() - 3600 * 10**9
    # a: 4 backlogged samples, 3 of them under cap 8 (running < 8); b: backlog only at its cap (observed max 4)
    a = [(0, 2), (3, 5), (2, 8), (1, 7), (4, 6), (0, 3)]
    b = [(0, 1), (2, 4), (1, 4), (0, 2)]
    request = ExportMetricsServiceRequest()
    json_format.ParseDict({"resourceMetrics": [_gauges("vllm", "a", a, t0), _gauges("vllm", "b", b, t0)]}, request)
    metrics.spool_metrics(project.id, request.SerializeToString())
    metrics.get_writer().flush(force=True)
    start = datetime.fromtimestamp(t0 / 1e9, timezone.utc) - timedelta(minutes=1)
    result = engine_series.scheduler_from_metrics(Scope(project.id, "vllm", start, start + timedelta(hours=1)),
                                                  caps={"a": 8})
    assert result["instances"]["a"]["gap_fraction"] == 0.75 and result["instances"]["a"]["cap_source"] == "traces"
    assert result["instances"]["b"]["gap_fraction"] == 0.0 and result["instances"]["b"]["cap"] == 4
    assert result["service"] == 3 / 6 and result["interval_s"] == 10.0
    assert result["instances"]["a"]["queue_depth_mean"] == 10 / 6


def test_no_gauges_is_unknown_not_zero(clickhouse, alpha):
    project, _ = alpha
    now = datetime.now(timezone.utc)
    result = engine_series.scheduler_from_metrics(Scope(project.id, "vllm", now - timedelta(hours=1), now))
    assert result == {"service": None, "instances": {}, "interval_s": None}


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["admission_gap", "queue_backlog"])
def test_metrics_and_traces_agree_on_simulated_traffic(preset, clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base=preset, duration="20m", seed=4, metrics=True)
    start, end = sent.start, sent.end + timedelta(minutes=1)
    sweep = queries.scheduler_sweep(Scope(project.id, sent.service, start, end), bucket_ms=60_000)["instances"]
    backlog = sum(r["backlog_ms"] for r in sweep)
    traced_gap = sum(r["gap_ms"] for r in sweep) / backlog
    traced_queue = sum(r["queue_ms"] for r in sweep) / sum(r["covered_ms"] for r in sweep)
    caps = {r["instance"]: r["cap"] for r in sweep if r["cap"] is not None}
    sampled = engine_series.scheduler_from_metrics(Scope(project.id, sent.service, start, end), caps)
    sampled_queue = sum(i["queue_depth_mean"] * i["samples"] for i in sampled["instances"].values()) / sum(
        i["samples"] for i in sampled["instances"].values())
    # sampled every 10 s over 20 minutes: within 0.2 of the exact gap_fraction, queue depth within 30 %
    assert abs(sampled["service"] - traced_gap) <= 0.2, (sampled["service"], traced_gap)
    assert abs(sampled_queue - traced_queue) <= 0.3 * traced_queue, (sampled_queue, traced_queue)
