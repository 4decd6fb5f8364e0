"""Fair ingest: a project over its spans per second gets 429 / RESOURCE_EXHAUSTED with a retry delay, others go on.

The token buckets run on a fake clock (ingest.limits.State takes one), so refills are exact and nothing sleeps;
the exporter tests at the end use the real clock because the SDK really waits.
"""
import json
import threading

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from ingest import limits
from ingest.grpc_server import build_server
from ingest.pipeline import get_writer
from projects.models import Project
from tests import factories as f
from tests.helpers import spans

PB, JSON = "application/x-protobuf", "application/json"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch, settings):
    """Fresh buckets, limit cache and counters on a fake clock; 10 spans/s with 2 s of burst (20 spans)."""
    settings.INGEST_PROJECT_SPANS_PER_SECOND = 10
    settings.INGEST_PROJECT_BURST_SECONDS = 2
    fake = Clock()
    monkeypatch.setattr(limits, "state", limits.State(clock=fake))
    return fake


def post(client, key, n_spans: int, content_type=PB):
    """POST n_spans fresh attempt spans to /v1/traces in one request."""
    req = f.request(*[f.attempt() for _ in range(n_spans)])
    body = json.dumps(f.otlp_json(req)).encode() if content_type == JSON else req.SerializeToString()
    return client.post("/v1/traces", data=body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}")


def refused(response, reason="rate_limited") -> tuple[int, str]:
    """(Retry-After seconds, status message) of a 429."""
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (429, reason), response.content
    status = Status.FromString(response.content)
    assert status.code == 8  # RESOURCE_EXHAUSTED
    return int(response["Retry-After"]), status.message


def stored_count(project) -> int:
    get_writer().flush(force=True)
    return len(spans(project.id, "span_id"))


def test_project_over_its_rate_gets_429_and_the_other_project_is_untouched(client, alpha, beta, clickhouse, clock):
    (alpha, alpha_key), (beta, beta_key) = alpha, beta
    assert post(client, alpha_key, 20).status_code == 200  # the full burst: 10/s x 2 s
    retry_after, message = refused(post(client, alpha_key, 15))
    assert retry_after == 2  # 15 spans at 10/s from an empty bucket: 1.5 s, rounded up
    assert message.startswith("rate_limited: project over its limit of 10 spans per second")
    # beta, in the same instant, has its own full bucket
    assert post(client, beta_key, 20).status_code == 200
    assert (stored_count(alpha), stored_count(beta)) == (20, 20)


def test_429_is_answered_in_json_for_a_json_request(client, alpha, clickhouse, clock):
    _, key = alpha
    post(client, key, 20, JSON)
    response = post(client, key, 1, JSON)
    assert (response.status_code, response["Content-Type"], response["Retry-After"]) == (429, JSON, "1")
    assert response.json()["message"].startswith("rate_limited:")


def test_bucket_refills_at_the_rate(client, alpha, clickhouse, clock):
    _, key = alpha
    assert post(client, key, 20).status_code == 200
    clock.now += 1.4  # 14 tokens: not yet enough for 15
    assert refused(post(client, key, 15))[0] == 1  # 1 token missing: 0.1 s, at least 1
    clock.now += 0.1  # 15 tokens
    assert post(client, key, 15).status_code == 200
    clock.now += 100  # a long pause refills to the burst, not beyond
    assert post(client, key, 20).status_code == 200
    assert refused(post(client, key, 1))[0] == 1


def test_request_larger_than_the_burst_is_admitted_when_the_bucket_is_full_then_paid_back(client, alpha,
                                                                                        clickhouse, clock):
    project, key = alpha
    assert post(client, key, 50).status_code == 200  # 50 > burst 20, but the bucket was full
    # the bucket is at 20 - 50 = -30: one more span waits (1 + 30) / 10 = 3.1 s -> Retry-After 4
    assert refused(post(client, key, 1))[0] == 4
    clock.now += 3.1
    assert post(client, key, 1).status_code == 200
    assert stored_count(project) == 51


def test_override_in_the_project_takes_effect(client, alpha, clickhouse, clock, settings):
    project, key = alpha
    settings.INGEST_PROJECT_SPANS_PER_SECOND = 50_000
    assert post(client, key, 30).status_code == 200
    project.ingest_spans_per_second = 5  # saved through the model (as the admin does): seen at once here
    project.save()
    clock.now += 10
    assert post(client, key, 10).status_code == 200  # burst 5 x 2 s
    assert refused(post(client, key, 1))[0] == 1
    # another process changed it (no signal here): seen once the cached limits are CACHE_SECONDS old
    Project.objects.filter(pk=project.pk).update(ingest_spans_per_second=None)
    clock.now += 0.1
    assert refused(post(client, key, 1))[1].startswith("rate_limited: project over its limit of 5 ")
    clock.now += limits.CACHE_SECONDS
    assert post(client, key, 30).status_code == 200  # back to the default of 50,000/s


def test_zero_is_unlimited(client, alpha, beta, clickhouse, clock, settings):
    (alpha, alpha_key), (_, beta_key) = alpha, beta
    alpha.ingest_spans_per_second = 0
    alpha.save()
    for _ in range(3):
        assert post(client, alpha_key, 200).status_code == 200  # 600 spans in no time, default is 10/s
    settings.INGEST_PROJECT_SPANS_PER_SECOND = 0  # the default 0: unlimited for every project without an override
    limits.state.cached.clear()
    assert post(client, beta_key, 200).status_code == 200


def test_model_refuses_a_spool_share_outside_its_range(alpha):
    from django.core.exceptions import ValidationError

    project, _ = alpha
    for bad in (0.0, 0.005, 1.5):
        project.ingest_spool_share = bad
        with pytest.raises(ValidationError):
            project.full_clean()
    project.ingest_spool_share = 0.25
    project.full_clean()


def test_spool_share_is_the_override_else_the_default(alpha, beta, clock, settings):
    settings.INGEST_PROJECT_SPOOL_SHARE = 0.5
    (alpha, _), (beta, _) = alpha, beta
    alpha.ingest_spool_share = 0.2
    alpha.save()
    assert (limits.spool_share(alpha.pk), limits.spool_share(beta), limits.spool_share(beta.pk)) == (0.2, 0.5, 0.5)


def test_status_shows_the_limits_and_what_was_refused(client, alpha, beta, clickhouse, clock, settings):
    (alpha, key), (_, beta_key) = alpha, beta
    settings.INGEST_SPOOL_MAX_BYTES = 1000 * 1024 * 1024
    alpha.ingest_spool_share = 0.25
    alpha.save()
    post(client, key, 20)
    post(client, key, 7)  # refused: rate_limited, 7 spans
    post(client, key, 3)  # refused: 3 more
    limits.count_refused(alpha.pk, "spool_quota", 40)  # how the spool counts its refusals
    get_writer().flush(force=True)
    body = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {key}").json()
    assert body["spans_stored"] == 20
    assert body["limits"] == {"spans_per_second": 10, "burst_spans": 20, "spool_share": 0.25,
                              "spool_max_bytes": 250 * 1024 * 1024}
    throttled = body["throttled"]
    assert (throttled["rate_limited"], throttled["spool_quota"]) == (10, 40)
    assert throttled["since"] and throttled["last_refused_at"]
    beta_status = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {beta_key}").json()
    assert beta_status["throttled"] | {"since": None} == {"rate_limited": 0, "spool_quota": 0, "since": None,
                                                          "last_refused_at": None}


def test_bucket_admits_exactly_the_burst_under_concurrent_requests(clock):
    current = limits.limits_for(10, None)  # burst 20, and the clock stands still
    admitted = []

    def hammer():
        admitted.extend(1 for _ in range(50) if not limits.state.take(7, 1, current))

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(admitted) == 20


@pytest.mark.slow
def test_grpc_over_limit_is_resource_exhausted_with_retry_info(transactional_db, alpha, beta, clickhouse, clock):
    (_, alpha_key), (_, beta_key) = alpha, beta
    server, port = build_server("127.0.0.1", 0)
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = trace_service_pb2_grpc.TraceServiceStub(channel)
            many = f.request(*[f.attempt() for _ in range(20)])
            stub.Export(many, metadata=(("authorization", f"Bearer {alpha_key}"),))
            with pytest.raises(grpc.RpcError) as caught:
                stub.Export(f.request(*[f.attempt() for _ in range(15)]),
                            metadata=(("authorization", f"Bearer {alpha_key}"),))
            stub.Export(many, metadata=(("authorization", f"Bearer {beta_key}"),))  # beta is untouched
    finally:
        server.stop(grace=None)
    error = caught.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error.details().startswith("rate_limited: project over its limit of 10 spans per second")
    trailers = dict(error.trailing_metadata())
    detail = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])  # where the OTLP spec puts it
    info = error_details_pb2.RetryInfo()
    assert detail.details[0].Unpack(info) and info.retry_delay.seconds == 2  # 15 spans at 10/s: 1.5 s -> 2
    # and where the Python SDK exporter looks for it
    assert error_details_pb2.RetryInfo.FromString(trailers["google.rpc.retryinfo-bin"]).retry_delay.seconds == 2


def _send_twice(exporter, n_first: int, n_second: int) -> None:
    """Two exports through the SDK: the second is over the limit at first, and the exporter retries it."""
    provider = TracerProvider(resource=Resource.create({"service.name": "limited"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # one export per span
    tracer = provider.get_tracer("t")
    for n in (n_first, n_second):
        with tracer.start_as_current_span("batch", attributes={"llm.run.id": f"run-{n}"}):
            pass
    provider.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_sdk_exporters_retry_after_the_given_delay_and_get_through(transport, transactional_db, live_server,
                                                                   alpha, clickhouse, monkeypatch, settings):
    """Real clock: with 1 span/s and a burst of 1, the second export is refused for 1 s; the SDK waits and resends."""
    project, key = alpha
    settings.INGEST_PROJECT_SPANS_PER_SECOND = 1
    settings.INGEST_PROJECT_BURST_SECONDS = 1
    monkeypatch.setattr(limits, "state", limits.State())
    if transport == "http":
        exporter = HttpExporter(endpoint=f"{live_server.url}/v1/traces", headers={"Authorization": f"Bearer {key}"},
                                timeout=10)
        _send_twice(exporter, 1, 1)
    else:
        server, port = build_server("127.0.0.1", 0)
        server.start()
        try:
            exporter = GrpcExporter(endpoint=f"127.0.0.1:{port}", insecure=True,
                                    headers=(("authorization", f"Bearer {key}"),), timeout=10)
            _send_twice(exporter, 1, 1)
        finally:
            server.stop(grace=None)
    assert limits.refused(project.pk)["rate_limited"] >= 1  # the second export was refused at least once
    assert stored_count(project) == 2  # and stored after the retry


def test_admin_edits_the_overrides_and_refuses_a_share_out_of_range(client, alpha, clock):
    from django.contrib.auth.models import User

    project, _ = alpha
    client.force_login(User.objects.create_superuser("root", password="x"))
    url = f"/admin/projects/project/{project.pk}/change/"
    assert limits.project_limits(project.pk) == limits.Limits(10, 20, 0.5, 200, 1000, 10_000, 1000)  # defaults, cached
    page = client.get(url).content.decode()
    assert "Ingest limits" in page and "0 = unlimited" in page and "Cardinality limits per hour" in page
    form = {"name": "alpha", "created_at_0": "2026-01-05", "created_at_1": "10:00:00",
            "ingest_spans_per_second": "5", "ingest_spool_share": "2", "ingest_max_routes_per_hour": "50"}
    assert "Ensure this value is less than or equal to 1.0" in client.post(url, form).content.decode()
    assert client.post(url, {**form, "ingest_spool_share": "0.3"}).status_code == 302
    # seen at once in this process; the blank cardinality limits keep the defaults
    assert limits.project_limits(project.pk) == limits.Limits(5, 10, 0.3, 200, 50, 10_000, 1000)
