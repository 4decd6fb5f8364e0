"""Every form of docs/span-convention.md -> instants and buckets, through decode -> spool -> writer -> ClickHouse."""
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from tests import factories as f
from tests.helpers import attempts, spans

ERROR = Status.STATUS_CODE_ERROR
LLM = {"tenant.id": "alice", "llm.route": "/v1/chat", "llm.connection.reused": True}
BUCKETS = ("t_queue_ms", "t_conn_ms", "t_first_token_ms", "t_stream_ms", "t_post_ms")


def buckets(row) -> tuple:
    return tuple(row[b] for b in BUCKETS)


def test_native_missing_events_fall_back_to_span_start_queued_at_and_span_end(alpha, ingest):
    project, key = alpha
    # no queued (-> span start 0) and no released (-> span end 1250)
    no_ends = f.span(duration_ms=1250, attributes=LLM, events={"admitted": 30, "first_token": 330, "last_token": 1230})
    # no admitted: unknown, never queued_at (a queue of 0)
    no_admitted = f.span(duration_ms=1000, attributes=LLM,
                         events={"queued": 10, "first_token": 210, "last_token": 910, "released": 990})
    ingest(key, f.request(no_ends, no_admitted))
    first, second = attempts(project.id)
    # 30 - 0 -> 30; 330 - 30 - 0 -> 300; 1230 - 330 -> 900; 1250 - 1230 -> 20; total 1250 - 0
    assert buckets(first) + (first["total_ms"],) == (30, 0, 300, 900, 20, 1250)
    assert first["queued_at"] == first["start_at"] and first["released_at"] == first["end_at"]
    # t_queue and t_first_token unknown (no admission instant); 910 - 210 -> 700; 990 - 910 -> 80; total 990 - 10;
    # TTFT 210 - 10 -> 200 still measured
    assert buckets(second) + (second["total_ms"], second["ttft_ms"]) == (None, 0, None, 700, 80, 980, 200)


def test_t_conn_sums_connect_stage_spans_including_one_sent_in_a_later_request(alpha, ingest):
    project, key = alpha
    parent = f.attempt(t_queue_ms=20, t_first_token_ms=300, reused=False)
    connect = f.stage(parent, "connect", offset_ms=20, duration_ms=30)
    tokenize = f.stage(parent, "tokenize", offset_ms=60, duration_ms=5)  # a stage, but not connection setup
    ingest(key, f.request(parent, connect, tokenize))
    [row] = attempts(project.id)
    # only the 30 ms connect span is known yet: 300 - 30 -> 270
    assert (row["t_conn_ms"], row["t_first_token_ms"]) == (30, 270)

    ingest(key, f.request(f.stage(parent, "connect", offset_ms=50, duration_ms=10)))
    [row] = attempts(project.id)
    # 30 + 10 -> 40; 300 - 40 -> 260; the other buckets do not move
    assert buckets(row) == (20, 40, 260, 900, 15)


def test_t_conn_is_zero_when_reused_and_null_when_the_span_says_nothing(alpha, ingest):
    project, key = alpha
    reused = f.attempt(t_first_token_ms=300, reused=True)
    unknown = f.attempt(t_first_token_ms=300, reused=None)
    # a connect span under a reused connection does not count: reused says 0
    ingest(key, f.request(reused, f.stage(reused, "connect", 20, 30), unknown))
    first, second = attempts(project.id)
    assert (first["connection_reused"], first["t_conn_ms"], first["t_first_token_ms"]) == (True, 0, 300)
    # nothing known: t_conn NULL, t_first_token subtracts 0 -> 300
    assert (second["connection_reused"], second["t_conn_ms"], second["t_first_token_ms"]) == (None, None, 300)


def test_vllm_latency_attributes_give_instants_and_tokens(alpha, ingest):
    project, key = alpha
    s = f.span(name="llm_request", duration_ms=1270, attributes={
        "gen_ai.latency.time_in_queue": 0.05, "gen_ai.latency.time_to_first_token": 0.35, "gen_ai.latency.e2e": 1.25,
        "gen_ai.usage.prompt_tokens": 512, "gen_ai.usage.completion_tokens": 128, "gen_ai.request.id": "cmpl-1"})
    ingest(key, f.request(s, service="vllm"))
    [row] = attempts(project.id)
    # queued = start; admitted 50; first 350; last 1250; released = end 1270
    # 50; t_conn NULL (vLLM says nothing); 350 - 50 - 0 -> 300; 1250 - 350 -> 900; 1270 - 1250 -> 20
    assert (row["form"], row["role"]) == ("vllm", "attempt")
    assert buckets(row) == (50, None, 300, 900, 20)
    assert (row["ttft_ms"], row["total_ms"], row["t_retry_ms"]) == (350, 1270, 0)
    assert (row["input_tokens"], row["output_tokens"]) == (512, 128)


def test_genai_time_to_first_chunk_gives_first_token_and_span_bounds_the_rest(alpha, ingest):
    project, key = alpha
    s = f.span(name="chat llama-3.1-8b", duration_ms=1000, kind=Span.SPAN_KIND_CLIENT, attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "llama-3.1-8b",
        "gen_ai.response.time_to_first_chunk": 0.4, "gen_ai.usage.input_tokens": 90, "gen_ai.usage.output_tokens": 30})
    ingest(key, f.request(s))
    [row] = attempts(project.id)
    # queued = start, admitted unknown (a client cannot see a queue): t_queue and t_first_token NULL;
    # first 400 -> TTFT 400; last = released = end 1000: 600 then 0
    assert (row["form"], row["model"]) == ("genai", "llama-3.1-8b")
    assert buckets(row) + (row["ttft_ms"],) == (None, None, None, 600, 0, 400)
    assert (row["input_tokens"], row["output_tokens"]) == (90, 30)


def test_openllmetry_first_and_last_completion_chunks_give_first_and_last_token(alpha, ingest):
    project, key = alpha
    chunks = [("gen_ai.content.completion.chunk", ms) for ms in (250, 300, 640, 900)]
    s = f.span(name="openai.chat", duration_ms=1000, kind=Span.SPAN_KIND_CLIENT, events=chunks,
               attributes={"gen_ai.request.model": "gpt-4o", "gen_ai.is_streaming": True})
    ingest(key, f.request(s))
    [row] = attempts(project.id)
    # first chunk 250 -> TTFT 250 (t_queue, t_first_token not measured); 900 - 250 -> 650; end: 1000 - 900 -> 100
    assert row["form"] == "openllmetry"
    assert buckets(row) + (row["ttft_ms"],) == (None, None, None, 650, 100, 250)


def test_openinference_first_token_event_and_token_counts(alpha, ingest):
    project, key = alpha
    s = f.span(name="ChatCompletion", duration_ms=1500, kind=Span.SPAN_KIND_INTERNAL,
               events={"First Token Stream Event": 420},
               attributes={"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                           "llm.token_count.prompt": 120, "llm.token_count.completion": 80})
    ingest(key, f.request(s))
    [row] = attempts(project.id)
    # first 420 -> TTFT 420; a streamed span ends at the last chunk: 1500 - 420 -> 1080, then 0
    assert (row["form"], row["model"], row["input_tokens"], row["output_tokens"]) == ("openinference", "gpt-4o-mini", 120, 80)
    assert buckets(row) + (row["ttft_ms"],) == (None, None, None, 1080, 0, 420)


def test_sglang_prefill_waiting_child_gives_the_queue_interval(alpha, ingest, clickhouse):
    project, key = alpha
    root = f.span(name="Req 1a2b3c4d", duration_ms=1210, kind=Span.SPAN_KIND_INTERNAL, attributes={
        "gen_ai.latency.time_to_first_token": 0.5, "gen_ai.latency.e2e": 1.2,
        "gen_ai.usage.prompt_tokens": 64, "gen_ai.usage.completion_tokens": 16, "gen_ai.response.model": "qwen"})
    waiting = f.span(name="prefill_waiting", start_ns=root.start_time_unix_nano + 10 * f.MS, duration_ms=100,
                     trace_id=root.trace_id, parent=root, kind=Span.SPAN_KIND_INTERNAL)
    ingest(key, f.request(root, waiting, service="sglang"))
    [row] = attempts(project.id)
    # queued 10, admitted 110 -> 100; first 500: 500 - 110 -> 390; last 1200: 700; end 1210: 10; total 1210 - 10
    assert buckets(row) == (100, None, 390, 700, 10)
    assert (row["total_ms"], row["input_tokens"], row["output_tokens"], row["model"]) == (1200, 64, 16, "qwen")
    assert [r["role"] for r in spans(project.id, "role")] == ["attempt", "other"]


def _failed(start_ns, **attributes):
    """A failed native attempt: it queued 20 ms, then errored 100 ms after admission."""
    return f.span(start_ns=start_ns, duration_ms=120, status_code=ERROR, events={"queued": 0, "admitted": 20},
                  attributes={**LLM, **attributes})


def test_t_retry_on_the_final_attempt_spans_the_whole_run(alpha, ingest):
    project, key = alpha
    run = {"llm.run.id": "run-42"}
    first = _failed(f.BASE_NS, **run, **{"llm.attempt": 1, "llm.retry.cause": "timeout"})
    second = _failed(f.BASE_NS + 1500 * f.MS, **run, **{"llm.attempt": 2, "error.type": "rate_limited"})
    final = f.attempt(start_ns=f.BASE_NS + 4000 * f.MS, status_code=Status.STATUS_CODE_OK, attributes={**run, "llm.attempt": 3})
    # three traces (one per attempt) and the final one in a later request: llm.run.id ties them
    ingest(key, f.request(first, second))
    ingest(key, f.request(final))
    rows = attempts(project.id)
    # final: 4000 - 0 -> 4000; earlier attempts NULL; cause from llm.retry.cause, then error.type
    assert [(r["attempt"], r["t_retry_ms"], r["run_attempt_count"]) for r in rows] == [(1, None, 3), (2, None, 3), (3, 4000, 3)]
    assert [(r["status"], r["retry_cause"]) for r in rows] == [("error", "timeout"), ("error", "rate_limited"), ("ok", "")]
    # failed attempts still count in the buckets their instants allow: t_queue 20, nothing after admission
    assert [buckets(r) for r in rows[:2]] == [(20, 0, None, None, None)] * 2


def test_a_run_of_one_attempt_has_t_retry_zero_and_the_run_defaults_to_the_trace(alpha, ingest):
    project, key = alpha
    alone = f.attempt(start_ns=f.BASE_NS)
    trace = f.new_trace_id()
    # no llm.run.id: two attempts of one trace are one run; 700 ms apart
    failed = f.span(start_ns=f.BASE_NS + 60_000 * f.MS, duration_ms=120, status_code=ERROR, trace_id=trace,
                    events={"queued": 0, "admitted": 20}, attributes={**LLM, "http.request.resend_count": 0})
    again = f.attempt(start_ns=f.BASE_NS + 60_700 * f.MS, trace_id=trace, attributes={"http.request.resend_count": 1})
    ingest(key, f.request(alone, failed, again))
    rows = attempts(project.id)
    # alone: 0; failed: NULL; again (resend_count 1 -> attempt 2): 60700 - 60000 -> 700
    assert [(r["attempt"], r["t_retry_ms"], r["run_attempt_count"]) for r in rows] == [(1, 0, 1), (1, None, 2), (2, 700, 2)]


def test_route_attempt_and_tenant_fall_back_as_the_contract_says(alpha, ingest):
    project, key = alpha
    explicit = f.attempt(tenant="alice", route="/v1/chat",
                         attributes={"http.route": "/ignored", "llm.attempt": 5, "http.request.resend_count": 2})
    http = f.attempt(tenant=None, route=None, attributes={"http.route": "/v1/completions", "http.request.resend_count": 2})
    bare = f.attempt(name="POST /generate", tenant=None, route=None)
    ingest(key, f.request(explicit, http, bare, resource={"tenant.id": "acme"}))
    rows = attempts(project.id)
    # llm.route > http.route > span name; llm.attempt > resend_count 2 + 1 -> 3 > 1; span tenant > resource tenant
    assert [(r["route"], r["attempt"], r["tenant"]) for r in rows] == [
        ("/v1/chat", 5, "alice"), ("/v1/completions", 3, "acme"), ("POST /generate", 1, "acme")]


def test_stage_and_plain_spans_are_stored_but_only_attempts_reach_the_view(alpha, ingest):
    project, key = alpha
    parent = f.attempt()
    tokenize = f.stage(parent, "tokenize", offset_ms=25, duration_ms=4)
    plain = f.span(name="SELECT users", kind=Span.SPAN_KIND_CLIENT,
                   attributes={"db.system": "postgresql", "db.statement": "SELECT 1", "retries": 2})
    ingest(key, f.request(parent, tokenize, plain))
    rows = spans(project.id, "role, stage, name, span_attributes")
    assert [(r["role"], r["stage"]) for r in rows] == [("attempt", ""), ("stage", "tokenize"), ("other", "")]
    # every attribute of the plain span is kept, values rendered as text
    assert rows[2]["span_attributes"] == {"db.system": "postgresql", "db.statement": "SELECT 1", "retries": "2"}
    assert [r["span_id"] for r in attempts(project.id)] == [parent.span_id.hex()]


def test_llm_attributes_on_the_resource_do_not_make_plain_spans_attempts(alpha, ingest):
    project, key = alpha
    parent = f.attempt()
    health = f.span(name="GET /health", attributes={"http.route": "/health"})
    # the cap describes the instance, so it is a resource attribute; the attempt still reads it
    ingest(key, f.request(parent, health, resource={"llm.scheduler.cap": 8, "gen_ai.request.model": "llama"}))
    rows = spans(project.id, "role, cap")
    assert [(r["role"], r["cap"]) for r in rows] == [("attempt", 8), ("other", 8)]
    assert len(attempts(project.id)) == 1


def test_a_bucket_whose_instants_are_missing_is_null_not_zero(alpha, ingest):
    project, key = alpha
    s = f.span(duration_ms=915, attributes=LLM, events={"queued": 0, "admitted": 20, "last_token": 900, "released": 915})
    ingest(key, f.request(s))
    [row] = attempts(project.id)
    # no first_token: t_first_token and t_stream NULL (and ttft); 20; 915 - 900 -> 15; total 915
    assert buckets(row) == (20, 0, None, None, 15)
    assert (row["ttft_ms"], row["total_ms"]) == (None, 915)


def test_openlits_server_time_to_first_token_is_the_genai_first_chunk(alpha, ingest):
    """OpenLIT 1.44 names a streamed call's TTFT gen_ai.server.time_to_first_token (seconds), with
    gen_ai.request.stream: the same instants as time_to_first_chunk, not a span with TTFT ignored."""
    project, key = alpha
    s = f.span(name="chat gpt-4o", duration_ms=1300, kind=Span.SPAN_KIND_CLIENT, attributes={
        "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
        "gen_ai.request.stream": True, "gen_ai.server.time_to_first_token": 0.3002,
        "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 20})
    ingest(key, f.request(s, service="openlit-app"))
    [row] = attempts(project.id)
    # first chunk 300.2 ms after the start -> TTFT 300.2; last = released = end 1300: stream 999.8, post 0
    assert row["form"] == "genai"
    assert buckets(row) + (round(row["ttft_ms"], 1),) == (None, None, None, 999.8, 0, 300.2)


def test_openlits_time_to_first_token_without_stream_is_not_a_first_token(alpha, ingest):
    """OpenLIT sets gen_ai.server.time_to_first_token on a call that did not stream too, equal to the whole
    duration: TTFT and t_stream are not measured there (never a TTFT equal to the total)."""
    project, key = alpha
    s = f.span(name="chat gpt-4o", duration_ms=1300, kind=Span.SPAN_KIND_CLIENT, attributes={
        "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
        "gen_ai.request.stream": False, "gen_ai.server.time_to_first_token": 1.3,
        "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 20})
    ingest(key, f.request(s, service="openlit-app"))
    [row] = attempts(project.id)
    assert row["form"] == "genai" and (row["ttft_ms"], row["total_ms"]) == (None, 1300)
    assert buckets(row)[2:4] == (None, None)


def test_an_internal_span_with_only_a_model_name_is_not_an_attempt(alpha, ingest):
    """LiteLLM's proxy sets gen_ai.request.model on INTERNAL `route …` and fastapi.dependencies spans around its
    call: those are not attempts; the call (CLIENT) is, and so is an INTERNAL span the native form marks."""
    project, key = alpha
    call = f.span(name="litellm_request", duration_ms=1300, kind=Span.SPAN_KIND_CLIENT,
                  attributes={"gen_ai.request.model": "gpt-4o"})
    route = f.span(name="route /chat/completions", duration_ms=22, kind=Span.SPAN_KIND_INTERNAL,
                   attributes={"gen_ai.request.model": "gpt-4o"}, trace_id=call.trace_id, parent=call)
    marked = f.span(name="my attempt", duration_ms=500, kind=Span.SPAN_KIND_INTERNAL,
                    attributes={"gen_ai.request.model": "gpt-4o", "llm.attempt": 1})
    ingest(key, f.request(call, route, marked, service="litellm-proxy"))
    rows = spans(project.id, "name, role", order="name")
    assert [tuple(r) if not isinstance(r, dict) else (r["name"], r["role"]) for r in rows] == [
        ("litellm_request", "attempt"), ("my attempt", "attempt"), ("route /chat/completions", "other")]


def test_litellm_tries_sharing_a_call_id_are_one_run_with_t_retry(alpha, ingest):
    """LiteLLM's failed try and its retry are separate spans (separate traces) sharing litellm.call_id: one run of
    two attempts, the failed one first, t_retry from the first try's start to the retry's."""
    from datetime import timedelta

    from analysis.rollups.materialize import materialize
    from store import client

    project, key = alpha
    call = {"gen_ai.request.model": "gpt-4o", "litellm.call_id": "c-42", "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai"}
    failed = f.span(name="litellm_request", duration_ms=200, kind=Span.SPAN_KIND_CLIENT, attributes=call,
                    status_code=f.Status.STATUS_CODE_ERROR)
    retry = f.span(name="litellm_request", start_ns=failed.end_time_unix_nano + 300 * f.MS, duration_ms=1300,
                   kind=Span.SPAN_KIND_CLIENT, attributes=call)
    ingest(key, f.request(failed, retry, service="litellm-proxy"))
    rows = spans(project.id, "run_id, status", order="start_at")
    assert [(r["run_id"], r["status"]) for r in rows] == [("c-42", "error"), ("c-42", "unset")]
    materialize(project.id, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=2))
    [(count, t_retry)] = client.query_rows(
        "SELECT run_attempt_count, t_retry_ms FROM request_buckets WHERE project_id = {p:UInt32} AND run_id = 'c-42' "
        "AND t_retry_ms IS NOT NULL", {"p": project.id})
    assert (count, round(t_retry)) == (2, 500)


def test_litellm_v1s_span_of_a_retried_call_holds_its_failed_try_and_is_the_final_attempt(alpha, ingest):
    """LiteLLM 1.108's v1 proxy spans (measured): the `litellm_request` span of a call that succeeded on its retry starts
    with the call, 3 ms before the failed try's own span, and ends with the stream; both are INTERNAL, share
    litellm.call_id and carry llm.is_streaming but no first-token time. The run is two attempts, its final one the
    span that holds the other (not the latest-started, the failed try), with t_retry 0 (it starts with the run) and
    the whole call as its total: the retry's own start is in neither span."""
    from datetime import timedelta

    from analysis.rollups.materialize import materialize
    from store import client

    project, key = alpha
    call = {"gen_ai.request.model": "local-gpt", "litellm.call_id": "2b26f870", "gen_ai.operation.name": "acompletion",
            "gen_ai.system": "openai", "llm.is_streaming": "True", "llm.request.type": "acompletion"}
    whole = f.span(name="litellm_request", duration_ms=2290, kind=Span.SPAN_KIND_INTERNAL,
                   attributes={**call, "gen_ai.usage.input_tokens": 8, "gen_ai.usage.output_tokens": 21})
    failed = f.span(name="litellm_request", start_ns=whole.start_time_unix_nano + 3 * f.MS, duration_ms=25,
                    kind=Span.SPAN_KIND_INTERNAL, trace_id=whole.trace_id, status_code=ERROR,
                    attributes={**call, "error.type": "InternalServerError", "http.response.status_code": "500"})
    alone = f.span(name="litellm_request", duration_ms=1300, kind=Span.SPAN_KIND_INTERNAL,
                   attributes={**call, "litellm.call_id": "c-alone"})
    ingest(key, f.request(whole, failed, alone, service="litellm-proxy"))
    materialize(project.id, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=2))
    rows = client.query(
        "SELECT run_id, status, retry_cause, is_final_attempt, run_attempt_count, t_retry_ms, ttft_ms, total_ms "
        "FROM request_buckets FINAL WHERE project_id = {p:UInt32} ORDER BY start_at", parameters={"p": project.id})
    # whole: final, t_retry 0 (start - the run's first start), total 2290 ms; the failed try counted with its cause
    assert [(r["run_id"], r["status"], r["retry_cause"], r["is_final_attempt"], r["run_attempt_count"], r["t_retry_ms"],
             r["ttft_ms"], round(r["total_ms"])) for r in rows] == [
        ("2b26f870", "unset", "", True, 2, 0, None, 2290),
        ("2b26f870", "error", "InternalServerError", False, 2, None, None, 25),
        ("c-alone", "unset", "", True, 1, 0, None, 1300)]
    assert {r["form"] for r in spans(project.id, "form")} == {"openllmetry"}  # llm.is_streaming


def test_litellm_v2s_tries_are_client_spans_of_one_run_in_the_requests_trace(alpha, ingest):
    """LiteLLM 1.108's proxy with LITELLM_OTEL_V2 (measured): in the trace of the request, under its INTERNAL
    fastapi.dependencies span (with gen_ai.request.model), a CLIENT `chat <model>` span per try sharing litellm.call_id:
    the failed one ERROR with its tokens '0' as strings, the retry with gen_ai.response.time_to_first_chunk; and an
    INTERNAL `route <model>` span per try. Two attempts of one run: t_retry from the failed try's start, TTFT the
    retry's; the INTERNAL spans are not attempts."""
    from datetime import timedelta

    from analysis.rollups.materialize import materialize
    from store import client

    project, key = alpha
    deps = f.span(name="fastapi.dependencies", duration_ms=30, kind=Span.SPAN_KIND_INTERNAL,
                  attributes={"gen_ai.request.model": "local-gpt"})
    call = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "local-gpt",
            "litellm.call_id": "19d5d7ea", "gen_ai.system": "openai"}
    start = deps.start_time_unix_nano + 40 * f.MS

    def under(name, offset_ms, duration_ms, kind=Span.SPAN_KIND_CLIENT, **kwargs):
        return f.span(name=name, start_ns=start + int(offset_ms * f.MS), duration_ms=duration_ms, kind=kind,
                      trace_id=deps.trace_id, parent=deps, **kwargs)

    route = under("route local-gpt", 0, 6, kind=Span.SPAN_KIND_INTERNAL, attributes={"gen_ai.request.model": "local-gpt"})
    failed = under("chat local-gpt", 60, 350, status_code=ERROR, attributes={
        **call, "gen_ai.usage.input_tokens": "0", "gen_ai.usage.output_tokens": "0", "error.type": "InternalServerError"})
    retry = under("chat local-gpt", 1215, 1340, attributes={
        **call, "gen_ai.response.time_to_first_chunk": 0.3267, "gen_ai.usage.input_tokens": "8",
        "gen_ai.usage.output_tokens": "21"})
    ingest(key, f.request(deps, route, failed, retry, service="litellm-proxy-v2"))
    assert [(r["name"], r["role"]) for r in spans(project.id, "name, role")] == [
        ("fastapi.dependencies", "other"), ("route local-gpt", "other"), ("chat local-gpt", "attempt"),
        ("chat local-gpt", "attempt")]
    materialize(project.id, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=2))
    rows = client.query(
        "SELECT status, form, is_final_attempt, run_attempt_count, t_retry_ms, ttft_ms, t_stream_ms, output_tokens "
        "FROM request_buckets FINAL WHERE project_id = {p:UInt32} ORDER BY start_at", parameters={"p": project.id})
    # failed: no first token, 0 tokens; retry: 1215 - 60 -> t_retry 1155, TTFT 326.7, stream 1340 - 326.7 -> 1013.3
    assert [(r["status"], r["form"], r["is_final_attempt"], r["run_attempt_count"], r["t_retry_ms"],
             r["ttft_ms"] and round(r["ttft_ms"], 1), r["t_stream_ms"] and round(r["t_stream_ms"], 1),
             r["output_tokens"]) for r in rows] == [
        ("error", "genai", False, 2, None, None, None, 0), ("unset", "genai", True, 2, 1155, 326.7, 1013.3, 21)]
