"""OTLP metrics: real OpenTelemetry SDK metric exporters (HTTP and gRPC) against a live server, and the
answers of /v1/metrics to good and bad requests."""
import gzip
import json
from types import SimpleNamespace
from unittest.mock import patch

import pytest
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpExporter
from opentelemetry.metrics import Observation
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest, ExportMetricsServiceResponse)
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource

from ingest import metrics
from ingest.grpc_server import build_server
from ingest.spool import Spool
from ingest.writer import insert_batch, METRICS
from store import client

RESOURCE = {"service.name": "vllm-a", "service.instance.id": "pod-1", "host.name": "h1"}


def _rows(sql: str, **params) -> list[tuple]:
    metrics.get_writer().flush(force=True)
    return client.query_rows(sql, parameters=params)


def _emit(exporter) -> None:
    """A gauge, a counter (twice), an up-down counter, a histogram and an exponential histogram, one export."""
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    provider = MeterProvider(resource=Resource.create(RESOURCE), metric_readers=[reader], views=[
        View(instrument_name="ttft_exp", aggregation=ExponentialBucketHistogramAggregation())])
    meter = provider.get_meter("vllm")
    meter.create_observable_gauge("vllm.kv_cache_usage_perc",
                                  callbacks=[lambda options: [Observation(0.87, {"model_name": "m"})]])
    preemptions = meter.create_counter("vllm.num_preemptions")
    preemptions.add(3, {"model_name": "m"})
    preemptions.add(4, {"model_name": "m"})
    meter.create_up_down_counter("vllm.num_requests_running").add(5)
    histogram = meter.create_histogram("vllm.time_to_first_token_seconds")
    exponential = meter.create_histogram("ttft_exp")
    for value in (0.05, 0.2, 0.9):
        histogram.record(value)
        exponential.record(value)
    provider.shutdown()  # collects and exports once


def _assert_stored(project_id: int, counter_temporality: int) -> None:
    gauge = _rows("SELECT ServiceName, Instance, MetricName, Value, Attributes['model_name'] FROM otel_metrics_gauge "
                  "WHERE ProjectId = {p:UInt32}", p=project_id)
    assert gauge == [("vllm-a", "pod-1", "vllm.kv_cache_usage_perc", 0.87, "m")]
    sums = dict(((name, (value, temporality, monotonic)) for name, value, temporality, monotonic in _rows(
        "SELECT MetricName, Value, AggregationTemporality, IsMonotonic FROM otel_metrics_sum "
        "WHERE ProjectId = {p:UInt32}", p=project_id)))
    assert sums["vllm.num_preemptions"] == (7.0, counter_temporality, True)
    assert sums["vllm.num_requests_running"][0] == 5.0 and sums["vllm.num_requests_running"][2] is False
    [(count, total, buckets, bounds, low, high)] = _rows(
        "SELECT Count, Sum, BucketCounts, ExplicitBounds, Min, Max FROM otel_metrics_histogram "
        "WHERE ProjectId = {p:UInt32}", p=project_id)
    assert (count, round(total, 6), sum(buckets), len(buckets), low, high) == (3, 1.15, 3, len(bounds) + 1, 0.05, 0.9)
    [(count, scale, positive)] = _rows(
        "SELECT Count, Scale, arraySum(PositiveBucketCounts) FROM otel_metrics_exponential_histogram "
        "WHERE ProjectId = {p:UInt32}", p=project_id)
    assert (count, positive) == (3, 3) and scale > 0


@pytest.mark.slow
def test_http_exporter_points_are_stored_in_their_tables(live_server, clickhouse, alpha):
    project, key = alpha
    _emit(HttpExporter(endpoint=f"{live_server.url}/v1/metrics", headers={"Authorization": f"Bearer {key}"}))
    _assert_stored(project.id, counter_temporality=2)  # cumulative, the SDK's default


@pytest.mark.slow
def test_grpc_exporter_delta_counters_are_stored(transactional_db, clickhouse, alpha):
    project, key = alpha
    server, port = build_server("127.0.0.1", 0)
    server.start()
    try:
        exporter = GrpcExporter(endpoint=f"127.0.0.1:{port}", insecure=True,
                                headers=(("authorization", f"Bearer {key}"),),
                                preferred_temporality={Counter: AggregationTemporality.DELTA})
        _emit(exporter)
    finally:
        server.stop(0)
    _assert_stored(project.id, counter_temporality=1)


def _request(points: list[dict], name: str = "vllm:num_requests_waiting") -> dict:
    return {"resourceMetrics": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "vllm-b"}}]},
        "scopeMetrics": [{"metrics": [{"name": name, "gauge": {"dataPoints": points}}]}]}]}


def _now_ns() -> int:
    import time

    return time.time_ns()


def test_json_with_gzip_and_partial_success(client, clickhouse, alpha):
    project, key = alpha
    now = _now_ns()
    body = _request([{"timeUnixNano": str(now), "asInt": "4"}, {"timeUnixNano": "0", "asDouble": 1.0},
                     {"timeUnixNano": str(now), "asDouble": "NaN"}])
    response = client.post("/v1/metrics", gzip.compress(json.dumps(body).encode()), content_type="application/json",
                           HTTP_CONTENT_ENCODING="gzip", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedDataPoints"] == "2"
    assert "time_out_of_range" in partial["errorMessage"] and "value_not_finite" in partial["errorMessage"]
    assert _rows("SELECT ServiceName, Value FROM otel_metrics_gauge WHERE ProjectId = {p:UInt32}",
                 p=project.id) == [("vllm-b", 4.0)]


def test_summaries_are_refused_with_a_reason_and_the_rest_kept(client, clickhouse, alpha):
    project, key = alpha
    now = str(_now_ns())
    body = _request([{"timeUnixNano": now, "asDouble": 2.5}])
    body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"].append(
        {"name": "latency", "summary": {"dataPoints": [{"timeUnixNano": now, "count": "1", "sum": 1.0}]}})
    request = ExportMetricsServiceRequest()
    from google.protobuf import json_format

    json_format.ParseDict(body, request)
    response = client.post("/v1/metrics", request.SerializeToString(), content_type="application/x-protobuf",
                           HTTP_AUTHORIZATION=f"Bearer {key}")
    answer = ExportMetricsServiceResponse.FromString(response.content)
    assert (response.status_code, answer.partial_success.rejected_data_points) == (200, 1)
    assert "summary_not_stored" in answer.partial_success.error_message
    assert _rows("SELECT count() FROM otel_metrics_gauge WHERE ProjectId = {p:UInt32}", p=project.id) == [(1,)]


@pytest.mark.parametrize("body, content_type, status, reason", [
    (b"\xff\xff\xff", "application/x-protobuf", 400, "malformed_protobuf"),
    (b"{not json", "application/json", 400, "malformed_json"),
    (b"[]", "application/json", 400, "malformed_json"),
    (b"", "text/plain", 415, "unsupported_media_type"),
])
def test_bad_bodies_get_a_clear_error(client, clickhouse, alpha, body, content_type, status, reason):
    _, key = alpha
    response = client.post("/v1/metrics", body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}")
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (status, reason)


def test_a_bad_key_is_refused_before_the_body_is_read(client, clickhouse, db):
    response = client.post("/v1/metrics", b"\x00" * 10, content_type="application/x-protobuf",
                           HTTP_AUTHORIZATION="Bearer nope")
    assert response.status_code == 401


def test_a_replayed_batch_is_stored_once(clickhouse, alpha, tmp_path):
    """Exactly once: a writer that dies after its INSERTs and before removing the batch replays the same
    batch under the same tokens on restart; ClickHouse drops the replay in every table. Spooled in a spool of the
    test's own: the process's writer thread would claim its segment first now and then."""
    project, _ = alpha
    now = str(_now_ns())
    request = ExportMetricsServiceRequest()
    from google.protobuf import json_format

    json_format.ParseDict(_request([{"timeUnixNano": now, "asInt": "1"}, {"timeUnixNano": now, "asInt": "2"}]), request)
    spool = Spool(tmp_path, segment_spans=1000, max_bytes=1 << 30, fsync=False, max_age_s=60)
    with patch.object(metrics, "get_writer", lambda: SimpleNamespace(spool=spool)):
        metrics.spool_metrics(project.id, request.SerializeToString())
    spool.rotate(force=True)
    batch = spool.claim_batch(1 << 30)
    insert_batch(batch, METRICS)
    insert_batch(batch, METRICS)  # the replay
    batch.remove()
    assert _rows("SELECT count() FROM otel_metrics_gauge WHERE ProjectId = {p:UInt32}", p=project.id) == [(2,)]
