"""OTLP logs: /v1/logs (protobuf, JSON, gzip) and gRPC LogsService/Export store records in otel_logs, answer
partial_success for the records they drop and 400/401/403/415/429 as for traces; the real SDK's log exporter."""
import gzip
import json
import time
from types import SimpleNamespace
from unittest.mock import patch

import grpc
import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest, ExportLogsServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

from ingest import limits, logs
from ingest.grpc_server import LOGS_SERVICE, build_server
from ingest.spool import Spool
from ingest.writer import LOGS, insert_batch
from projects.models import ApiKey
from store import client as store
from store.migrate import RETAINED

PB, JSON = "application/x-protobuf", "application/json"
TRACE_HEX, SPAN_HEX = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
COLUMNS = "ServiceName, SeverityText, SeverityNumber, Body, TraceId, SpanId, TraceFlags, EventName, LogAttributes"


def _rows(project_id: int, columns: str = COLUMNS) -> list[tuple]:
    logs.get_writer().flush(force=True)
    return store.query_rows(f"SELECT {columns} FROM otel_logs WHERE project_id = {{p:UInt32}} ORDER BY Timestamp",
                            parameters={"p": project_id})


def _count(project_id: int) -> int:
    logs.get_writer().flush(force=True)
    [(n,)] = store.query_rows("SELECT count() FROM otel_logs WHERE project_id = {p:UInt32}", parameters={"p": project_id})
    return n


def _json_request(*records: dict, service: str = "chat-app") -> dict:
    return {"resourceLogs": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeLogs": [{"scope": {"name": "openlit", "version": "1.2"}, "logRecords": list(records)}]}]}


def _record(offset_ms: int = 0, **fields) -> dict:
    """An OTLP/JSON log record `offset_ms` after now (negative: in the past)."""
    return {"timeUnixNano": str(time.time_ns() + offset_ms * 1_000_000), "severityNumber": 9, "severityText": "INFO",
            "body": {"stringValue": "hello"}, **fields}


def _protobuf(doc: dict) -> bytes:
    """An OTLP/JSON document as protobuf bytes (ids given in it as hex, as OTLP/JSON has them)."""
    for rl in doc["resourceLogs"]:
        for sl in rl["scopeLogs"]:
            for record in sl["logRecords"]:
                for key in ("traceId", "spanId"):
                    if key in record:
                        record[key] = _base64(record[key])
    return json_format.ParseDict(doc, ExportLogsServiceRequest()).SerializeToString()


def _base64(hex_id: str) -> str:
    import base64

    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def _post(client, key, body: bytes, content_type: str = PB, **headers):
    return client.post("/v1/logs", body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}", **headers)


def test_protobuf_records_are_stored_with_bodies_attributes_and_ids(client, clickhouse, alpha):
    project, key = alpha
    doc = _json_request(
        _record(-2, traceId=TRACE_HEX, spanId=SPAN_HEX, flags=1, eventName="gen_ai.user.message",
                attributes=[{"key": "gen_ai.system", "value": {"stringValue": "openai"}},
                            {"key": "n", "value": {"intValue": "3"}},
                            {"key": "reasons", "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}}}]),
        _record(-1, body={"kvlistValue": {"values": [
            {"key": "message", "value": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "hi"}}]}}},
            {"key": "index", "value": {"intValue": "0"}}]}}, severityNumber=17, severityText="ERROR"),
        _record(0, body={"intValue": "42"}, severityNumber=0, severityText=""),
    )
    response = _post(client, key, _protobuf(doc))
    answer = ExportLogsServiceResponse.FromString(response.content)
    assert (response.status_code, response["Content-Type"]) == (200, PB)
    assert not answer.HasField("partial_success")
    first, second, third = _rows(project.id)
    assert first == ("chat-app", "INFO", 9, "hello", TRACE_HEX, SPAN_HEX, 1, "gen_ai.user.message",
                     {"gen_ai.system": "openai", "n": "3", "reasons": '["stop"]'})
    # a kvlist body is JSON at every depth (attribute values read one level); a record without ids stores ''
    assert second[:7] == ("chat-app", "ERROR", 17, '{"message":{"content":"hi"},"index":0}', "", "", 0)
    assert third[3] == "42"


def test_json_with_hex_ids_and_an_observed_time_only(client, clickhouse, alpha):
    project, key = alpha
    observed = time.time_ns() - 5_000_000_000
    doc = _json_request(_record(traceId=TRACE_HEX.upper(), spanId=SPAN_HEX),
                        {"observedTimeUnixNano": str(observed), "body": {"stringValue": "no event time"}},
                        _record(traceId="not-hex"), _record(spanId="abcd"))
    response = _post(client, key, json.dumps(doc).encode(), JSON)
    assert (response.status_code, response["Content-Type"]) == (200, JSON)
    partial = response.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "2"
    assert "invalid_trace_id" in partial["errorMessage"] and "invalid_span_id" in partial["errorMessage"]
    rows = _rows(project.id, "Body, TraceId, SpanId, toUnixTimestamp64Nano(Timestamp)")
    # ordered by time: the observed-only record is 5 s older than the other
    assert rows[0] == ("no event time", "", "", observed)
    assert rows[1][:3] == ("hello", TRACE_HEX, SPAN_HEX)  # hex is case-insensitive; stored lower-case


def test_gzip_bodies_are_stored(client, clickhouse, alpha):
    project, key = alpha
    body = gzip.compress(json.dumps(_json_request(_record(), _record())).encode())
    response = _post(client, key, body, JSON, HTTP_CONTENT_ENCODING="gzip")
    assert (response.status_code, response.json()) == (200, {})
    assert _count(project.id) == 2


def test_records_out_of_the_window_are_rejected_and_the_rest_stored(client, clickhouse, alpha, settings):
    project, key = alpha
    settings.CLICKHOUSE_RETENTION_DAYS = 30
    doc = _json_request(_record(-40 * 86_400_000), _record(3_600_000), {"body": {"stringValue": "no time at all"}},
                        _record(body={"stringValue": "kept"}))
    response = _post(client, key, _protobuf(doc))
    answer = ExportLogsServiceResponse.FromString(response.content)
    assert response.status_code == 200
    assert answer.partial_success.rejected_log_records == 3  # 40 days old, an hour ahead, no time
    assert answer.partial_success.error_message == "3 log record(s) rejected: time_out_of_range"
    assert _rows(project.id, "Body") == [("kept",)]


def test_a_bad_key_is_refused_before_the_body_is_read(client, clickhouse, alpha):
    project, _ = alpha
    response = _post(client, "nope", b"\x00" * 10)
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (401, "unknown_key")
    _, read_only = ApiKey.issue(project, ["read"])
    response = _post(client, read_only, _protobuf(_json_request(_record())))
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (403, "missing_scope")
    assert _count(project.id) == 0


@pytest.mark.parametrize("body, content_type, status, reason, words", [
    (b"\xff\xff\xff", PB, 400, "malformed_protobuf", "not a valid ExportLogsServiceRequest"),
    (b"{not json", JSON, 400, "malformed_json", "not valid JSON"),
    (b'{"resourceLogs": {}}', JSON, 400, "malformed_json", "resourceLogs is a list"),
    (b"{}", "text/plain", 415, "unsupported_media_type", "Content-Type must be"),
])
def test_bad_bodies_get_a_clear_error(client, clickhouse, alpha, body, content_type, status, reason, words):
    _, key = alpha
    response = _post(client, key, body, content_type)
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (status, reason)
    assert words in response.content.decode(errors="replace")


def test_bad_gzip_is_a_400(client, clickhouse, alpha):
    _, key = alpha
    response = _post(client, key, b"not gzip", PB, HTTP_CONTENT_ENCODING="gzip")
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (400, "malformed_gzip")


def test_log_records_count_against_the_spans_per_second_limit(client, clickhouse, alpha, settings, monkeypatch):
    """10 spans/s with 2 s of burst admit 20 spans: 20 * LOG_RECORDS_PER_SPAN records at once, then none until the
    bucket refills."""
    project, key = alpha
    settings.INGEST_PROJECT_SPANS_PER_SECOND, settings.INGEST_PROJECT_BURST_SECONDS = 10, 2
    now = [1000.0]
    monkeypatch.setattr(limits, "state", limits.State(clock=lambda: now[0]))
    many = _protobuf(_json_request(*[_record() for _ in range(20 * logs.LOG_RECORDS_PER_SPAN)]))
    assert _post(client, key, many).status_code == 200
    one_span = _protobuf(_json_request(*[_record() for _ in range(logs.LOG_RECORDS_PER_SPAN)]))
    refused = _post(client, key, one_span)
    assert (refused.status_code, refused["X-Latency-Obs-Reason"]) == (429, "rate_limited")
    now[0] += 0.1  # one span's worth refilled
    assert _post(client, key, one_span).status_code == 200
    assert _count(project.id) == 21 * logs.LOG_RECORDS_PER_SPAN


def test_a_replayed_batch_is_stored_once(clickhouse, alpha, tmp_path):
    """Exactly once: a writer that dies after its INSERT and before removing the batch replays the same batch
    under the same token on restart; ClickHouse drops the replay. The request is spooled as export spools it, in
    a spool of the test's own: the process's writer thread would claim its segment first now and then."""
    project, key = alpha
    spool = Spool(tmp_path, segment_spans=1000, max_bytes=1 << 30, fsync=False, max_age_s=60)
    writer = SimpleNamespace(spool=spool)
    with patch.object(logs, "get_writer", lambda: writer):
        logs.export(f"Bearer {key}", _protobuf(_json_request(_record(-1), _record())), "protobuf")
    spool.rotate(force=True)
    batch = spool.claim_batch(1 << 30)
    insert_batch(batch, LOGS)
    insert_batch(batch, LOGS)  # the replay
    batch.remove()
    assert _count(project.id) == 2


def test_otel_logs_expire_with_the_retention(clickhouse):
    [(query,)] = clickhouse.query_rows(
        "SELECT create_table_query FROM system.tables WHERE database = currentDatabase() AND name = 'otel_logs'")
    assert RETAINED["otel_logs"] == "TimestampTime"
    assert "TTL toDateTime(TimestampTime) + toIntervalDay(" in query


@pytest.fixture
def grpc_logs(transactional_db):
    """A unary Export stub of LogsService on a real gRPC server (the one serve_otlp_grpc runs)."""
    server, port = build_server("127.0.0.1", 0)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield channel.unary_unary(f"/{LOGS_SERVICE}/Export", request_serializer=ExportLogsServiceRequest.SerializeToString,
                              response_deserializer=ExportLogsServiceResponse.FromString)
    channel.close()
    server.stop(0)


@pytest.mark.slow
def test_grpc_export_stores_records_and_answers_partial_success(grpc_logs, clickhouse, alpha):
    project, key = alpha
    request = ExportLogsServiceRequest.FromString(_protobuf(_json_request(
        _record(traceId=TRACE_HEX, spanId=SPAN_HEX), _record(3_600_000))))
    answer = grpc_logs(request, metadata=(("authorization", f"Bearer {key}"),), timeout=10)
    assert answer.partial_success.rejected_log_records == 1
    assert "time_out_of_range" in answer.partial_success.error_message
    assert _rows(project.id, "Body, TraceId") == [("hello", TRACE_HEX)]
    with pytest.raises(grpc.RpcError) as refused:
        grpc_logs(request, metadata=(("authorization", "Bearer nope"),), timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.slow
def test_the_sdk_http_log_exporter_is_stored(live_server, clickhouse, alpha):
    project, key = alpha
    provider = LoggerProvider(resource=Resource.create({"service.name": "gw", "service.instance.id": "gw-1"}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(
        endpoint=f"{live_server.url}/v1/logs", headers={"Authorization": f"Bearer {key}"})))
    span = SpanContext(int(TRACE_HEX, 16), int(SPAN_HEX, 16), is_remote=False, trace_flags=TraceFlags(1))
    provider.get_logger("openlit").emit(
        body={"content": "What is 2+2?"}, event_name="gen_ai.user.message", severity_text="INFO",
        attributes={"gen_ai.system": "openai"}, context=set_span_in_context(NonRecordingSpan(span)))
    provider.shutdown()
    [row] = _rows(project.id, COLUMNS + ", ResourceAttributes['service.instance.id'], ScopeName")
    assert row == ("gw", "INFO", 0, '{"content":"What is 2+2?"}', TRACE_HEX, SPAN_HEX, 1, "gen_ai.user.message",
                   {"gen_ai.system": "openai"}, "gw-1", "openlit")
