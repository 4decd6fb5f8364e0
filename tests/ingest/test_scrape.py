"""Prometheus scrape targets: a real prometheus_client endpoint scraped by the beat's task into the metric tables."""
import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
from django.core.exceptions import ValidationError
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app

from ingest import metrics, scrape
from ingest.models import ScrapeTarget
from store import client as store

pytestmark = pytest.mark.slow


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def exporter():
    """A vLLM-like /metrics endpoint served by prometheus_client on a free port: (url, registry)."""
    registry = CollectorRegistry()
    Gauge("vllm:num_requests_running", "running", ["model_name"], registry=registry).labels("m").set(7)
    Gauge("vllm:kv_cache_usage_perc", "kv", ["model_name"], registry=registry).labels("m").set(0.93)
    Counter("vllm:num_preemptions", "preemptions", ["model_name"], registry=registry).labels("m").inc(12)
    ttft = Histogram("vllm:time_to_first_token_seconds", "ttft", ["model_name"], buckets=(0.1, 0.5, 1.0),
                     registry=registry)
    for value in (0.05, 0.3, 0.7, 2.0):
        ttft.labels("m").observe(value)
    server = make_server("127.0.0.1", 0, make_wsgi_app(registry), handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/metrics", registry
    server.shutdown()
    server.server_close()


def _target(project, url, **kw):
    return ScrapeTarget.objects.create(project=project, service="vllm", url=url, interval_seconds=5, **kw)


def _rows(sql, project_id):
    metrics.get_writer().flush(force=True)
    return store.query_rows(sql, parameters={"p": project_id})


def test_a_real_endpoint_is_scraped_into_the_metric_tables(clickhouse, alpha, exporter):
    project, _ = alpha
    url, _ = exporter
    target = _target(project, url, instance="vllm-0")
    assert scrape.scrape_due() == {"scraped": 1, "failed": 0}
    target.refresh_from_db()
    assert target.last_error == "" and target.last_points == 4 and target.next_due_at > target.last_scraped_at
    gauges = dict(_rows("SELECT MetricName, Value FROM otel_metrics_gauge WHERE ProjectId = {p:UInt32} "
                        "AND Attributes['model_name'] = 'm'", project.id))
    assert gauges["vllm:num_requests_running"] == 7 and gauges["vllm:kv_cache_usage_perc"] == 0.93
    [(name, value, monotonic, instance, service)] = _rows(
        "SELECT MetricName, Value, IsMonotonic, Instance, ServiceName FROM otel_metrics_sum "
        "WHERE ProjectId = {p:UInt32} AND MetricName LIKE 'vllm:%'", project.id)
    assert (name, value, monotonic, instance, service) == ("vllm:num_preemptions_total", 12, True, "vllm-0", "vllm")
    [(count, buckets, bounds)] = _rows("SELECT Count, BucketCounts, ExplicitBounds FROM otel_metrics_histogram "
                                       "WHERE ProjectId = {p:UInt32}", project.id)
    assert (count, buckets, bounds) == (4, [1, 1, 1, 1], [0.1, 0.5, 1.0])


def test_a_target_is_not_scraped_again_before_its_interval(clickhouse, alpha, exporter):
    project, _ = alpha
    _target(project, exporter[0])
    assert scrape.scrape_due()["scraped"] == 1
    assert scrape.scrape_due() == {"scraped": 0, "failed": 0}


def test_failing_targets_keep_their_error_and_do_not_stop_the_others(clickhouse, alpha, exporter):
    project, _ = alpha
    closed = _target(project, "http://127.0.0.1:9/metrics")
    good = _target(project, exporter[0], instance="good")
    result = scrape.scrape_due()
    assert result["scraped"] >= 1 and result["failed"] >= 1
    closed.refresh_from_db()
    good.refresh_from_db()
    assert "ConnectionError" in closed.last_error and good.last_error == ""
    assert _rows("SELECT DISTINCT Instance FROM otel_metrics_gauge WHERE ProjectId = {p:UInt32} AND "
                 "MetricName = 'vllm:num_requests_running'", project.id) == [("good",)]


@pytest.mark.parametrize("status, body, error", [("200 OK", b"this is { not prometheus\n", "ValueError"),
                                                  ("500 Internal Server Error", b"boom", "HTTPError")])
def test_garbage_or_a_server_error_is_an_error_on_the_row(clickhouse, alpha, status, body, error):
    project, _ = alpha

    def app(environ, start_response):
        start_response(status, [("Content-Type", "text/plain")])
        return [body]

    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        target = _target(project, f"http://127.0.0.1:{server.server_port}/metrics")
        assert scrape.scrape_due() == {"scraped": 0, "failed": 1}
    finally:
        server.shutdown()
        server.server_close()
    target.refresh_from_db()
    assert target.last_error.startswith(error)


def test_an_interval_under_five_seconds_is_refused(alpha):
    project, _ = alpha
    with pytest.raises(ValidationError):
        ScrapeTarget(project=project, service="s", url="http://127.0.0.1:1/metrics", interval_seconds=2).full_clean()
    with pytest.raises(ValidationError):
        ScrapeTarget(project=project, service="s", url="file:///etc/passwd", interval_seconds=5).full_clean()


def test_only_staff_reach_the_targets_admin(client, alpha, django_user_model):
    user = django_user_model.objects.create_user("ann", password="pw")
    client.force_login(user)
    assert client.get("/admin/ingest/scrapetarget/").status_code == 302  # to the admin login
    staff = django_user_model.objects.create_superuser("root", password="pw")
    client.force_login(staff)
    assert client.get("/admin/ingest/scrapetarget/").status_code == 200
