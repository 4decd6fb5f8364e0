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


def test_the_page_draws_one_chart_per_signal_with_a_line_per_instance(engine_metrics, ann_client):
    html = ann_client.get("/engine/", WINDOW).content.decode()
    assert text_of(html, "instances") == "2" and text_of(html, "sources") == "vllm"
    assert text_of(html, "kv") == "97%" and text_of(html, "gpu") == "not measured"
    assert spec(html, "engine-ttft")["data"][0]["name"] == "TTFT p95"
    kv = spec(html, "engine-kv")
    assert [t["name"] for t in kv["data"]] == ["gpu-a"] and kv["data"][0]["y"] == [50.0, 90.0, 97.0]
    assert kv["layout"]["yaxis"]["title"]["text"] == "%"
    assert spec(html, "engine-preemptions")["data"][0]["y"][1:] == [30.0, 60.0]  # counter increases per minute
    requests = [t["name"] for t in spec(html, "engine-requests")["data"]]
    assert requests == ["gpu-b waiting"]  # gpu-b's running is not sent: no line at 0
    assert 'id="engine-gpu"' not in html and 'id="engine-memory"' not in html  # not measured: no chart
    # every chart on the window's time axis, the legend beside the plot
    for name in ("engine-ttft", "engine-kv", "engine-requests", "engine-preemptions"):
        layout = spec(html, name)["layout"]
        assert layout["xaxis"]["range"] == ["2026-01-05T09:55:00+00:00", "2026-01-05T11:00:00+00:00"], layout["xaxis"]


def test_the_instance_picker_narrows_the_charts_not_the_cards(engine_metrics, ann_client):
    html = ann_client.get("/engine/", {**WINDOW, "instance": "gpu-b"}).content.decode()
    assert text_of(html, "instances") == "2" and text_of(html, "kv") == "97%"  # the service's
    assert 'id="engine-kv"' not in html  # gpu-b sends no KV cache
    assert [t["name"] for t in spec(html, "engine-requests")["data"]] == ["gpu-b waiting"]
    assert '<option value="gpu-b" selected>' in html
    unknown = ann_client.get("/engine/", {**WINDOW, "instance": "nope"}).content.decode()
    assert 'id="engine-kv"' in unknown  # an instance without metrics: all of them


def test_gpu_memory_reads_used_of_total_in_gib():
    from analysis import wording

    assert wording.memory(72 * 2**30, 80 * 2**30) == "72 of 80 GiB"
    assert wording.memory(3.5 * 2**30, 8 * 2**30) == "3.5 of 8 GiB"
    assert wording.memory(None, 80 * 2**30) == "not measured"


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
