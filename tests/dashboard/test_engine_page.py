"""The Engine page: the engine's metrics per instance over TTFT on one time axis, "not measured" without them,
links from the Diagnosis page's engine nodes, and only for the project's members."""
import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from ingest import metrics
from tests import factories as f
from tests.dashboard.pages import spec, text_of

SVC = "alpha-svc"
WINDOW = {"project": "alpha", "service": SVC, "start": "2026-01-05T09:55:00Z", "end": "2026-01-05T11:00:00Z"}


def _points(name, values, instance, kind="gauge"):
    points = [{"timeUnixNano": str(f.BASE_NS + i * 60 * 10**9), "asDouble": v} for i, v in enumerate(values)]
    data = {"dataPoints": points}
    if kind == "sum":
        data.update(aggregationTemporality=2, isMonotonic=True)
    return {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": SVC}},
                                        {"key": "service.instance.id", "value": {"stringValue": instance}}]},
            "scopeMetrics": [{"metrics": [{"name": name, kind: data}]}]}


@pytest.fixture
def engine_metrics(traffic, members):
    _, alpha, _ = members["ann"]
    request = ExportMetricsServiceRequest()
    json_format.ParseDict({"resourceMetrics": [
        _points("vllm:kv_cache_usage_perc", [0.5, 0.9, 0.97], "gpu-a"),
        _points("vllm:num_preemptions_total", [10, 40, 100], "gpu-a", kind="sum"),
        _points("vllm:num_requests_waiting", [0, 0, 1], "gpu-b")]}, request)
    metrics.spool_metrics(alpha.pk, request.SerializeToString())
    metrics.get_writer().flush(force=True)
    return alpha


def test_the_page_draws_each_instance_over_ttft(engine_metrics, ann_client):
    html = ann_client.get("/engine/", WINDOW).content.decode()
    assert text_of(html, "instances") == "2" and text_of(html, "sources") == "vllm"
    assert text_of(html, "kv") == "97%" and text_of(html, "gpu") == "not measured"
    figure = spec(html, "engine-panels")
    names = [trace["name"] for trace in figure["data"]]
    assert names[0] == "TTFT p95 (traces)" and "gpu-a KV cache" in names and "gpu-b waiting" in names
    assert {trace["xaxis"] for trace in figure["data"]} == {"x"}  # one shared time axis
    kv = next(t for t in figure["data"] if t["name"] == "gpu-a KV cache")
    assert kv["y"] == [50.0, 90.0, 97.0]
    preemptions = next(t for t in figure["data"] if t["name"] == "gpu-a preemptions")
    assert preemptions["y"][1:] == [30.0, 60.0]  # counter increases per minute
    assert not any(t["name"].startswith("gpu-b GPU") for t in figure["data"])  # not measured: no line at 0


def test_without_metrics_the_page_says_not_measured(traffic, ann_client):
    response = ann_client.get("/engine/", WINDOW)
    assert response.status_code == 200
    assert 'id="engine-not-measured"' in response.content.decode()


def test_another_projects_member_cannot_see_it(engine_metrics, client, members):
    client.force_login(members["ben"][0])
    html = client.get("/engine/", WINDOW).content.decode()
    assert "gpu-a" not in html


def test_the_diagnosis_page_links_its_engine_nodes_to_the_engine_page():
    from dashboard import evidence_links

    for node in ("kv_cache", "preemptions", "gpu_memory", "restarts", "gpu_busy", "queue_empty"):
        assert evidence_links.LINKS[node][0][0] == "engine"
