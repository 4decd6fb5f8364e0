"""GenAI events sent as OTLP log records with a span context give their attempt the first token, last token and
token counts its span lacks (analysis/sql/materialize_request_buckets.sql, log_spans); the span's own win; a log
arriving after its span marks the span's hour dirty (analysis/sql/dirty_hours.sql)."""
from datetime import timedelta

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from analysis.rollups.materialize import dirty_hours, materialize, materialize_dirty, store_now
from ingest import logs
from tests import factories as f

DAY, H = timedelta(days=1), timedelta(hours=1)
CHUNK, CHOICE = "gen_ai.content.completion.chunk", "gen_ai.choice"


@pytest.fixture
def buckets(clickhouse):
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")
    return clickhouse


def _send_logs(key: str, *records: dict) -> None:
    """Log records through the real /v1/logs path (decode -> spool -> writer), then flushed. A record is
    {"span": Span, "at_ms": offset from the span's start, "event": name, "attributes": {...}, "body": {...}}."""
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.append(f.kv("service.name", "llm-gateway"))
    sl = rl.scope_logs.add()
    for r in records:
        rec = sl.log_records.add()
        rec.time_unix_nano = r["span"].start_time_unix_nano + int(r["at_ms"] * f.MS)
        rec.trace_id, rec.event_name = r["span"].trace_id, r.get("event", "")
        if r.get("with_span", True):
            rec.span_id = r["span"].span_id
        rec.attributes.extend(f.kv(k, v) for k, v in r.get("attributes", {}).items())
        if "body" in r:
            rec.body.CopyFrom(f.kv("", r["body"]).value)
        else:
            rec.body.CopyFrom(AnyValue(string_value=""))
    decoded = logs.export(f"Bearer {key}", req.SerializeToString(), "protobuf")
    assert not decoded.rejected
    logs.get_writer().flush(force=True)


def _client_span(**attributes) -> Span:
    """An OpenLLMetry-form streamed call (llm.is_streaming) without chunk events or usage: no token instant, no counts.
    It lasts 1,310 ms."""
    return f.span(name="openai.chat", duration_ms=1310, kind=Span.SPAN_KIND_CLIENT,
                  attributes={"llm.is_streaming": True, "gen_ai.request.model": "gpt-4o", **attributes})


def _row(clickhouse, project_id, span: Span) -> dict:
    [row] = clickhouse.query(
        "SELECT * FROM request_buckets FINAL WHERE project_id = {p:UInt32} AND span_id = {s:String}",
        parameters={"p": project_id, "s": span.span_id.hex()})
    return row


def _measured(row: dict) -> tuple:
    return (row["ttft_ms"], row["t_first_token_ms"], row["t_stream_ms"], row["t_post_ms"], row["input_tokens"],
            row["output_tokens"])


def test_logs_give_a_span_without_them_its_first_and_last_token_and_counts(alpha, ingest, buckets):
    project, key = alpha
    call = _client_span()
    ingest(key, f.request(call))
    _send_logs(key, {"span": call, "at_ms": 0, "event": "gen_ai.user.message", "body": {"content": "hi"}},
               *({"span": call, "at_ms": 300 + 50 * i, "event": CHUNK} for i in range(21)),
               {"span": call, "at_ms": 1300, "event": CHOICE, "body": {"index": 0, "finish_reason": "stop"},
                "attributes": {"gen_ai.usage.input_tokens": 812, "gen_ai.usage.output_tokens": 21}})
    materialize(project.id, f.BASE - DAY, f.BASE + DAY)
    row = _row(buckets, project.id, call)
    # first chunk at +300: TTFT 300 (queued at the span's start); the choice at +1300: stream 1300 - 300 = 1000, post
    # 1310 - 1300 = 10; no admission instant in a client form: t_first_token unknown
    assert _measured(row) == (300, None, 1000, 10, 812, 21)
    assert row["first_token_at"].timestamp() == pytest.approx((call.start_time_unix_nano + 300 * f.MS) / 1e9)


def test_usage_in_a_json_body_counts_where_the_attributes_have_none(alpha, ingest, buckets):
    project, key = alpha
    top, nested = _client_span(), _client_span()
    ingest(key, f.request(top, nested))
    _send_logs(key, {"span": top, "at_ms": 1300, "event": CHOICE,
                     "body": {"gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 7}},
               {"span": nested, "at_ms": 1300, "event": CHOICE,
                "body": {"index": 0, "usage": {"input_tokens": 41, "output_tokens": 8}}})
    materialize(project.id, f.BASE - DAY, f.BASE + DAY)
    # a choice and no chunk: the last token only (no stream without a first token), post 1310 - 1300
    assert _measured(_row(buckets, project.id, top)) == (None, None, None, 10, 40, 7)
    assert _measured(_row(buckets, project.id, nested)) == (None, None, None, 10, 41, 8)


def test_the_spans_own_instants_and_counts_are_kept(alpha, ingest, buckets):
    project, key = alpha
    native = f.attempt(t_queue_ms=20, t_first_token_ms=300, t_stream_ms=900, t_post_ms=15)  # 800 / 200 tokens
    ingest(key, f.request(native))
    _send_logs(key, {"span": native, "at_ms": 100, "event": CHUNK}, {"span": native, "at_ms": 200, "event": CHOICE,
               "attributes": {"gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 6}})
    materialize(project.id, f.BASE - DAY, f.BASE + DAY)
    # the span's: TTFT 20 + 300, first token 300, stream 900, post 15, its counts
    assert _measured(_row(buckets, project.id, native)) == (320, 300, 900, 15, 800, 200)


def test_without_a_matching_span_context_nothing_is_filled(alpha, ingest, buckets):
    project, key = alpha
    call, sibling = _client_span(), _client_span()
    other = f.span(name="db", trace_id=call.trace_id, parent=call, kind=Span.SPAN_KIND_CLIENT)
    ingest(key, f.request(call, sibling, other))
    # the trace's other span's events, one without a span id, and a message event (no instant): none is call's
    _send_logs(key, {"span": other, "at_ms": 5, "event": CHUNK, "attributes": {"gen_ai.usage.output_tokens": 3}},
               {"span": call, "at_ms": 900, "event": CHOICE, "with_span": False},
               {"span": call, "at_ms": 20, "event": "gen_ai.assistant.message", "body": {"content": "x"}})
    materialize(project.id, f.BASE - DAY, f.BASE + DAY)
    assert _measured(_row(buckets, project.id, call)) == (None, None, None, None, None, None)
    assert _measured(_row(buckets, project.id, sibling)) == (None, None, None, None, None, None)


def test_an_older_sdks_event_name_attribute_counts(alpha, ingest, buckets):
    project, key = alpha
    call = _client_span()
    ingest(key, f.request(call))
    _send_logs(key, {"span": call, "at_ms": 250, "attributes": {"event.name": CHUNK}},
               {"span": call, "at_ms": 1250, "attributes": {"event.name": CHOICE}})
    materialize(project.id, f.BASE - DAY, f.BASE + DAY)
    assert _measured(_row(buckets, project.id, call))[:4] == (250, None, 1000, 60)


def test_logs_arriving_after_their_span_mark_its_hour_for_the_minute_job(alpha, beta, ingest, buckets):
    project, key = alpha
    # queued at 10:59:50, its choice at 11:00:00.3: the hour is the span's (10:00), not the log's
    late = _client_span()
    late.start_time_unix_nano = f.BASE_NS + (59 * 60 + 50) * 1000 * f.MS
    late.end_time_unix_nano = late.start_time_unix_nano + 10_310 * f.MS
    ingest(key, f.request(late))
    materialize_dirty(store_now() - H)
    assert _measured(_row(buckets, project.id, late))[5] is None
    since = store_now()
    _send_logs(key, {"span": late, "at_ms": 10_300, "event": CHOICE, "attributes": {"gen_ai.usage.output_tokens": 9}})
    # another project's message event: no hour of its own (not a record the materialization reads)
    beta_project, beta_key = beta
    _send_logs(beta_key, {"span": _client_span(), "at_ms": 1, "event": "gen_ai.user.message", "body": {"content": "x"}})
    assert dirty_hours(since) == [(project.id, f.BASE)]
    materialize_dirty(since)
    assert _measured(_row(buckets, project.id, late))[3:] == (10, None, 9)
