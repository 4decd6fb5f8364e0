"""POST /v1/traces with bad bodies, keys, sizes and types: the OTLP answer, and the valid spans kept."""
import gzip
import json
import time
import tracemalloc

import pytest
from google.protobuf import json_format
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ingest.pipeline import get_writer
from projects.models import ApiKey, Project
from tests import factories as f
from tests.helpers import attempts, spans

PB, JSON = "application/x-protobuf", "application/json"


def post(client, key, body, content_type=PB, **headers):
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    elif not isinstance(body, bytes):
        body = body.SerializeToString()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"} if key else {}
    # CONTENT_TYPE in extra too: the test client drops content_type when the body is empty
    return client.post("/v1/traces", data=body, content_type=content_type, CONTENT_TYPE=content_type, **auth, **headers)


def answer(response) -> ExportTraceServiceResponse:
    """The 200 answer, parsed from the encoding the request was sent in."""
    assert response.status_code == 200, response.content
    if response["Content-Type"] == JSON:
        return json_format.Parse(response.content, ExportTraceServiceResponse())
    return ExportTraceServiceResponse.FromString(response.content)


def failure(response, status: int, reason: str) -> Status:
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (status, reason)
    return Status.FromString(response.content)


def stored(project) -> list[str]:
    """Span ids stored for the project, once the spool is flushed."""
    get_writer().flush(force=True)
    return [r["span_id"] for r in spans(project.id, "span_id")]


@pytest.fixture
def alpha(alpha, clickhouse):
    return alpha


def test_truncated_protobuf_is_a_400_naming_the_reason(client, alpha):
    project, key = alpha
    body = f.request(f.attempt(), f.attempt()).SerializeToString()
    status = failure(post(client, key, body[:-7]), 400, "malformed_protobuf")
    assert status.message.startswith("malformed_protobuf:") and status.code == 3  # INVALID_ARGUMENT
    assert stored(project) == []


def test_json_span_with_a_wrongly_typed_field_is_rejected_and_the_others_stored(client, alpha):
    project, key = alpha
    good, bad = f.attempt(), f.attempt()
    doc = f.otlp_json(f.request(good, bad))
    f.json_spans(doc)[1]["startTimeUnixNano"] = {"seconds": 5}
    result = answer(post(client, key, doc, JSON))
    assert result.partial_success.rejected_spans == 1
    assert result.partial_success.error_message == "1 span(s) rejected: invalid_span"
    assert stored(project) == [good.span_id.hex()]
    # the JSON path gives the same numbers as protobuf (the factory's 20 / 0 / 300 / 900 / 15)
    [row] = attempts(project.id)
    buckets = ("t_queue_ms", "t_conn_ms", "t_first_token_ms", "t_stream_ms", "t_post_ms", "input_tokens")
    assert tuple(row[b] for b in buckets) == (20, 0, 300, 900, 15, 800)


def test_json_ids_that_are_not_hex_or_of_the_wrong_length_are_rejected_by_reason(client, alpha):
    project, key = alpha
    good = f.attempt()
    doc = f.otlp_json(f.request(f.attempt(), f.attempt(), good, f.attempt()))
    bad_trace, short_span, _, bad_parent = f.json_spans(doc)
    bad_trace["traceId"] = "zz" * 16  # 32 characters, not hex
    short_span["spanId"] = "abcd"  # 2 bytes, not 8
    bad_parent["parentSpanId"] = "00ff"
    result = answer(post(client, key, doc, JSON))
    # 3 rejected, one reason each, sorted by reason
    assert result.partial_success.rejected_spans == 3
    assert result.partial_success.error_message == (
        "1 span(s) rejected: invalid_parent_span_id; 1 span(s) rejected: invalid_span_id; "
        "1 span(s) rejected: invalid_trace_id")
    assert stored(project) == [good.span_id.hex()]


def test_protobuf_ids_of_the_wrong_length_are_rejected_and_the_others_stored(client, alpha):
    project, key = alpha
    short_trace, short_span, good = f.attempt(), f.attempt(), f.attempt()
    short_trace.trace_id = b"\x01" * 8
    short_span.span_id = b"\x02" * 4
    result = answer(post(client, key, f.request(short_trace, short_span, good)))
    assert result.partial_success.rejected_spans == 2
    assert result.partial_success.error_message == "1 span(s) rejected: invalid_span_id; 1 span(s) rejected: invalid_trace_id"
    assert stored(project) == [good.span_id.hex()]


def test_empty_body_is_a_success_that_stores_nothing(client, alpha):
    project, key = alpha
    result = answer(post(client, key, b""))
    assert not result.HasField("partial_success")
    assert stored(project) == []


def test_gzip_bomb_stops_at_the_body_limit_with_413(client, alpha, settings):
    project, key = alpha
    settings.INGEST_MAX_BODY_BYTES = 1_000_000
    bomb = gzip.compress(b"\0" * 100_000_000, compresslevel=9)  # 100 MB of zeros -> ~100 KB
    assert len(bomb) < 200_000
    tracemalloc.start()
    began = time.monotonic()
    try:
        response = post(client, key, bomb, HTTP_CONTENT_ENCODING="gzip")
        elapsed, peak = time.monotonic() - began, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    failure(response, 413, "body_too_large")
    # inflating stops past 1 MB: memory stays near that, not the 100 MB a full inflate would hold
    assert peak < 10_000_000 and elapsed < 2
    assert stored(project) == []


def test_body_over_the_limit_is_a_413(client, alpha, settings):
    project, key = alpha
    settings.INGEST_MAX_BODY_BYTES = 2048
    body = f.request(*[f.attempt() for _ in range(10)]).SerializeToString()
    assert len(body) > 2048
    status = failure(post(client, key, body), 413, "body_too_large")
    assert "2048" in status.message
    assert stored(project) == []


def test_span_with_10000_attributes_is_stored_truncated_but_typed_columns_read_all(client, alpha, settings):
    project, key = alpha
    filler = {f"x.{i:05d}": i for i in range(10_000)}
    # the keys read into columns come after the cut
    attrs = {**filler, "tenant.id": "late-tenant", "llm.route": "/late", "gen_ai.request.model": "m-late"}
    s = f.span(attributes=attrs, events={"queued": 0, "admitted": 10, "first_token": 110, "last_token": 150})
    result = answer(post(client, key, f.request(s)))
    limit = settings.INGEST_MAX_ATTRIBUTES
    assert result.partial_success.rejected_spans == 0
    assert result.partial_success.error_message == f"1 span(s) had more than {limit} attributes; the rest were not stored"
    stored(project)
    [row] = spans(project.id, "tenant, route, model, role, span_attributes")
    assert (row["tenant"], row["route"], row["model"], row["role"]) == ("late-tenant", "/late", "m-late", "attempt")
    assert len(row["span_attributes"]) == limit
    assert row["span_attributes"]["x.00000"] == "0" and "tenant.id" not in row["span_attributes"]


def test_non_utf8_bytes_in_protobuf_strings_are_replaced_and_the_span_kept(client, alpha):
    project, key = alpha
    broken, good = f.attempt(name="chat-QQQQ", tenant="t-QQQQ"), f.attempt()
    body = f.request(broken, good).SerializeToString()
    assert body.count(b"QQQQ") == 2
    # same length, so every length prefix stays right: only the UTF-8 is wrong
    result = answer(post(client, key, body.replace(b"QQQQ", b"\xff\xfe\xfd\xfc")))
    assert result.partial_success.rejected_spans == 0
    assert "not valid UTF-8" in result.partial_success.error_message
    assert stored(project) == [broken.span_id.hex(), good.span_id.hex()]
    row = spans(project.id, "name, tenant", where=f"span_id = '{broken.span_id.hex()}'")[0]
    assert (row["name"], row["tenant"]) == ("chat-\ufffd", "t-\ufffd")


def test_zero_or_negative_timestamps_are_rejected_as_invalid_timestamp(client, alpha):
    project, key = alpha
    zero, good = f.attempt(), f.attempt()
    zero.start_time_unix_nano = 0
    result = answer(post(client, key, f.request(zero, good)))
    assert (result.partial_success.rejected_spans, result.partial_success.error_message) == (
        1, "1 span(s) rejected: invalid_timestamp")
    negative, good_json = f.attempt(), f.attempt()
    doc = f.otlp_json(f.request(negative, good_json))
    f.json_spans(doc)[0]["startTimeUnixNano"] = "-5"
    result = answer(post(client, key, doc, JSON))
    assert (result.partial_success.rejected_spans, result.partial_success.error_message) == (
        1, "1 span(s) rejected: invalid_timestamp")
    assert stored(project) == [good.span_id.hex(), good_json.span_id.hex()]


def test_lifecycle_events_out_of_order_are_stored_with_the_negative_bucket_null(client, alpha):
    project, key = alpha
    s = f.span(duration_ms=915, attributes={"tenant.id": "alice", "llm.connection.reused": True},
               events={"queued": 0, "admitted": 100, "first_token": 50, "last_token": 900, "released": 915})
    answer(post(client, key, f.request(s)))
    stored(project)
    [row] = attempts(project.id)
    # 100 - 0 -> 100; 50 - 100 -> -50: NULL; 900 - 50 -> 850; 915 - 900 -> 15
    assert row["lifecycle_ordered"] is False
    assert (row["t_queue_ms"], row["t_first_token_ms"], row["t_stream_ms"], row["t_post_ms"]) == (100, None, 850, 15)


@pytest.mark.parametrize("auth", ["revoked", "missing", "read_only", "not_a_key"])
def test_ingest_without_a_valid_ingest_key_is_refused(client, alpha, auth):
    project, key = alpha
    expected = {"revoked": "unknown_key", "missing": "missing_key", "read_only": "missing_scope", "not_a_key": "unknown_key"}
    if auth == "revoked":
        row, key = ApiKey.issue(project, ["ingest"])
        answer(post(client, key, b""))  # works (and is cached) before the revocation
        row.revoke()
    elif auth == "read_only":
        key = ApiKey.issue(project, ["read"])[1]
    else:
        key = None if auth == "missing" else "lo_" + "x" * 43
    # a key without the ingest scope is known but not allowed: 403; the others are unknown: 401
    http, rpc = (403, 7) if auth == "read_only" else (401, 16)  # PERMISSION_DENIED / UNAUTHENTICATED
    status = failure(post(client, key, f.request(f.attempt())), http, expected[auth])
    assert status.code == rpc
    assert stored(project) == []


def test_spans_sent_with_bobs_key_land_in_bobs_project_only(client, alpha, beta):
    alice_project, _ = alpha
    bob_project, bob_key = beta
    # a resource that claims to be alice's project changes nothing: the key decides
    claim = {"project": alice_project.name, "latency_obs.project": alice_project.name, "project.id": alice_project.id}
    s = f.attempt()
    answer(post(client, bob_key, f.request(s, resource=claim)))
    assert stored(bob_project) == [s.span_id.hex()]
    assert stored(alice_project) == [] and attempts(alice_project.id) == []


def test_unsupported_content_type_is_a_415(client, alpha):
    project, key = alpha
    response = post(client, key, f.request(f.attempt()), content_type="text/plain")
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (415, "unsupported_media_type")
    assert response.json()["message"].startswith("unsupported_media_type:")
    assert stored(project) == []


def test_json_request_gets_a_json_answer_with_int64_as_string(client, alpha):
    project, key = alpha
    doc = f.otlp_json(f.request(f.attempt(), f.attempt(), f.attempt()))
    f.json_spans(doc)[0]["spanId"] = "nothex!!nothex!!"
    f.json_spans(doc)[1]["spanId"] = "0000"
    response = post(client, key, doc, JSON)
    assert (response.status_code, response["Content-Type"]) == (200, JSON)
    assert response.json() == {"partialSuccess": {"rejectedSpans": "2", "errorMessage": "2 span(s) rejected: invalid_span_id"}}
    assert len(stored(project)) == 1


def test_ingest_status_counts_the_keys_project_only(client, alpha, beta):
    alice_project, alice_key = alpha
    bob_project, bob_key = beta
    parent = f.attempt()
    answer(post(client, alice_key, f.request(parent, f.stage(parent, "tokenize", 25, 4), f.attempt())))
    answer(post(client, bob_key, f.request(f.attempt())))
    get_writer().flush(force=True)
    read_only = ApiKey.issue(alice_project, ["read"])[1]
    response = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {read_only}")
    body = response.json()
    # alice: 2 attempts + 1 stage -> 3 spans; bob's one attempt is not counted
    assert (response.status_code, body["project"], body["spans_stored"], body["attempts_stored"]) == (200, "alpha", 3, 2)
    assert body["last_ingested_at"] is not None
    body = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {bob_key}").json()
    assert (body["project"], body["spans_stored"], body["attempts_stored"]) == ("beta", 1, 1)
    empty = ApiKey.issue(Project.objects.create(name="empty"), ["read"])[1]
    body = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {empty}").json()
    assert (body["spans_stored"], body["attempts_stored"], body["last_ingested_at"]) == (0, 0, None)
    ingest_only = ApiKey.issue(alice_project, ["ingest"])[1]
    response = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {ingest_only}")
    assert (response.status_code, response.json()["error"]) == (403, "missing_scope")
