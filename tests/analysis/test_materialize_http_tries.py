"""Tries from HTTP-client children (issue 33 item 5): the HTTP client spans (httpx, requests, aiohttp
instrumentations; OpenLIT's `POST`) right under an attempt span alone in its run are that run's tries: each ERROR one
before the last is a failed attempt of its own, and t_retry = the last try's start - the first try's start, for any
form (analysis/sql/materialize_request_buckets.sql; docs/span-convention.md)."""
from datetime import timedelta

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests import factories as f

ERROR = f.Status.STATUS_CODE_ERROR
CLIENT = Span.SPAN_KIND_CLIENT
# one model call in each of three forms, as their instrumentations send it (no run keys: a run of the trace)
GENAI = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o"}
OPENLLMETRY = {"llm.is_streaming": True, "gen_ai.request.model": "gpt-4o"}
OPENINFERENCE = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o"}


@pytest.fixture
def buckets(clickhouse):
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")
    return clickhouse


def _rows(clickhouse, project_id):
    materialize(project_id, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=2))
    return clickhouse.query(
        "SELECT form, run_id, span_id, attempt, status, retry_cause, is_final_attempt, run_attempt_count, t_retry_ms, "
        "total_ms, ttft_ms, toUnixTimestamp64Nano(queued_at) AS queued_ns FROM request_buckets FINAL "
        "WHERE project_id = {p:UInt32} ORDER BY start_at, span_id",
        parameters={"p": project_id})


def _http(parent: Span, offset_ms: float, duration_ms: float, status: int | None = 200, **attributes) -> Span:
    """An HTTP client span under `parent` (opentelemetry-instrumentation-httpx's old semconv, as OpenLIT sends it);
    status None: no answer (the connection broke), an ERROR span without a status code."""
    attrs = {"http.method": "POST", "http.url": "http://llm/v1/chat/completions", **attributes}
    if status is not None:
        attrs["http.status_code"] = status
    return f.span(name="POST", start_ns=parent.start_time_unix_nano + int(offset_ms * f.MS), duration_ms=duration_ms,
                  trace_id=parent.trace_id, parent=parent, kind=CLIENT, attributes=attrs,
                  status_code=ERROR if status is None or status >= 400 else f.Status.STATUS_CODE_UNSET)


def _call(attributes: dict, **kwargs) -> Span:
    return f.span(name="chat gpt-4o", duration_ms=1500, kind=CLIENT, attributes=attributes, **kwargs)


@pytest.mark.parametrize("form,attributes", [("genai", GENAI), ("openllmetry", OPENLLMETRY),
                                             ("openinference", OPENINFERENCE)])
def test_an_error_child_and_its_retry_are_a_run_of_two_attempts(alpha, ingest, buckets, form, attributes):
    project, key = alpha
    call = _call(attributes)
    failed, retry = _http(call, 3, 2, status=500), _http(call, 450, 6)
    ingest(key, f.request(call, failed, retry))
    final, tried = sorted(_rows(buckets, project.id), key=lambda r: r["is_final_attempt"], reverse=True)
    # the call's span is the final attempt (its tries: 2); t_retry = the retry's start 450 - the failed try's 3 -> 447
    assert (final["form"], final["attempt"], final["status"], final["is_final_attempt"], final["run_attempt_count"],
            final["t_retry_ms"]) == (form, 2, "unset", True, 2, 447)
    # as a final attempt it starts at its last try: queued 450 ms after the span's start, total 1500 - 450 -> 1050, so
    # the run begins at queued_at - t_retry, the failed try's start, and lasts t_retry + total = 1497 ms
    assert (final["queued_ns"] - call.start_time_unix_nano, final["total_ms"]) == (450 * f.MS, 1050)
    assert final["queued_ns"] - int(final["t_retry_ms"]) * f.MS == failed.start_time_unix_nano
    # the failed try: an attempt of the same run, its cause from the status code, its total the HTTP span's 2 ms
    assert (tried["form"], tried["run_id"], tried["span_id"], tried["attempt"], tried["status"], tried["retry_cause"],
            tried["is_final_attempt"], tried["run_attempt_count"], tried["t_retry_ms"], tried["total_ms"],
            tried["ttft_ms"]) == (form, final["run_id"], failed.span_id.hex(), 1, "error", "server_error", False, 2,
                                  None, 2, None)


def test_the_retry_statistics_count_the_failed_tries(alpha, ingest, buckets):
    from analysis.reads import queries

    project, key = alpha
    calls = [_call(GENAI, start_ns=f.BASE_NS + i * 2000 * f.MS) for i in range(4)]
    tries = [_http(c, 5, 10) for c in calls[:3]]
    # the 4th: two failed tries (a 429, then a connection error without a status code), the third succeeds
    last = calls[3]
    tries += [_http(last, 5, 10, status=429), _http(last, 300, 20, status=None), _http(last, 900, 10)]
    ingest(key, f.request(*calls, *tries, service="chat-app"))
    rows = _rows(buckets, project.id)
    assert sorted((r["attempt"], r["retry_cause"]) for r in rows if r["status"] == "error") == [
        (1, "rate_limited"), (2, "connection_error")]
    summary = queries.retry_summary(Scope(project.id, "chat-app", f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=2)))
    # 4 runs, all known; 6 attempts, 2 failed; extra attempts 0 + 0 + 0 + 2
    assert (summary["runs"], summary["known_runs"], summary["attempts"], summary["failed_attempts"],
            summary["extra_attempts"], summary["runs_with_retries"]) == (4, 4, 6, 2, 2, 1)
    # t_retry of the retried call: 900 - 5 -> 895; the others 0 (one try, seen)
    assert sorted(r["t_retry_ms"] for r in rows if r["is_final_attempt"]) == [0, 0, 0, 895]


def test_resend_count_numbers_the_tries(alpha, ingest, buckets):
    project, key = alpha
    call = _call(GENAI)
    first = _http(call, 1, 5, status=503, **{"http.request.resend_count": 0})
    second = _http(call, 200, 5, status=503, **{"http.request.resend_count": 1})
    third = _http(call, 700, 5, **{"http.request.resend_count": 2})
    ingest(key, f.request(call, first, second, third))
    rows = _rows(buckets, project.id)
    # resend_count + 1; t_retry 700 - 1
    assert [(r["attempt"], r["status"], r["t_retry_ms"]) for r in rows] == [
        (3, "unset", 699), (1, "error", None), (2, "error", None)]


def test_a_successful_http_child_before_the_last_is_no_failed_try(alpha, ingest, buckets):
    """Only ERROR children are failed tries: an earlier answered request (a redirect, another call of the SDK) is not,
    and the failed tries are numbered among themselves."""
    project, key = alpha
    call = _call(GENAI)
    ingest(key, f.request(call, _http(call, 1, 5), _http(call, 10, 5, status=502), _http(call, 500, 5)))
    rows = _rows(buckets, project.id)
    # 2 tries: the 502 (t_retry from its start 10 to the last's 500 -> 490) and the last
    assert [(r["attempt"], r["status"], r["retry_cause"], r["run_attempt_count"], r["t_retry_ms"]) for r in rows] == [
        (2, "unset", "", 2, 490), (1, "error", "server_error", 2, None)]


def test_without_http_children_the_tries_stay_unknown(alpha, ingest, buckets):
    """Unknown is not zero: a client span with no HTTP children may hold retries (the client's own), so its run's
    t_retry stays NULL; one successful HTTP child shows the one try: t_retry 0."""
    project, key = alpha
    hidden, seen = _call(GENAI), _call(GENAI)
    ingest(key, f.request(hidden, seen, _http(seen, 2, 5)))
    rows = {r["span_id"]: r for r in _rows(buckets, project.id)}
    assert (rows[hidden.span_id.hex()]["t_retry_ms"], rows[hidden.span_id.hex()]["run_attempt_count"]) == (None, 1)
    assert (rows[seen.span_id.hex()]["t_retry_ms"], rows[seen.span_id.hex()]["is_final_attempt"]) == (0, True)


def test_a_run_of_several_attempt_spans_keeps_its_spans_as_the_tries(alpha, ingest, buckets):
    """Where the spans already are the tries (llm.run.id over two attempt spans), their HTTP children add none."""
    project, key = alpha
    run = {**GENAI, "llm.run.id": "r-1"}
    one = _call({**run, "llm.attempt": 1}, status_code=ERROR)
    two = _call({**run, "llm.attempt": 2}, start_ns=one.end_time_unix_nano + 100 * f.MS)
    ingest(key, f.request(one, two, _http(one, 2, 5, status=500), _http(two, 2, 5)))
    rows = _rows(buckets, project.id)
    # two attempts: t_retry = 1600 ms between the spans' starts (1500 + 100)
    assert [(r["attempt"], r["status"], r["run_attempt_count"], r["t_retry_ms"]) for r in rows] == [
        (1, "error", 2, None), (2, "unset", 2, 1600)]


def test_a_failed_try_in_the_next_hour_is_stored_with_that_hour(alpha, ingest, buckets):
    """A try's row belongs to the hour its span started in, the call's to its own; a last try in the next hour leaves
    the call where it started, its t_retry 0 and its total holding the tries (as a held run's)."""
    project, key = alpha
    call = _call(GENAI, start_ns=f.BASE_NS + int((3600 - 0.1) * 1000) * f.MS)  # 100 ms before 11:00
    ingest(key, f.request(call, _http(call, 200, 5, status=500), _http(call, 600, 5)))
    rows = _rows(buckets, project.id)
    assert [(r["status"], r["t_retry_ms"], r["run_attempt_count"], r["total_ms"]) for r in rows] == [
        ("unset", 0, 2, 1500), ("error", None, 2, 5)]
