"""Measurement coverage from spans of several forms, through the real ingest and materialize, and the
insufficient_data verdict it leads to when TTFT cannot be measured."""
from datetime import timedelta

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from analysis.diagnosis.service import run_diagnosis
from analysis.reads.coverage import coverage
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests import factories as f

START, END = f.BASE - timedelta(minutes=5), f.BASE + timedelta(minutes=30)
ATTRS = {"tenant.id": "acme", "llm.route": "/v1/chat", "gen_ai.request.model": "llama-3.1-8b",
         "gen_ai.usage.input_tokens": 300, "gen_ai.usage.output_tokens": 100}


def genai(duration_ms=1500.0, ttfc_s=None):
    """An OTel GenAI client span; without ttfc_s it has no time_to_first_chunk (a non-streaming call, or an
    instrumentation version that does not record it)."""
    attrs = {**ATTRS, "gen_ai.operation.name": "chat"}
    if ttfc_s is not None:
        attrs["gen_ai.response.time_to_first_chunk"] = ttfc_s
    return f.span(name="chat llama-3.1-8b", duration_ms=duration_ms, kind=Span.SPAN_KIND_CLIENT, attributes=attrs)


def native_without_admitted(**attrs):
    """A native attempt with no `admitted` event and nothing about its connection: queued 0, first token 300,
    last token 1200, released 1215."""
    return f.span(duration_ms=1215, attributes={**ATTRS, **attrs},
                  events={"queued": 0, "first_token": 300, "last_token": 1200, "released": 1215})


def vllm():
    return f.span(name="llm_request", duration_ms=1270, attributes={
        "gen_ai.latency.time_in_queue": 0.05, "gen_ai.latency.time_to_first_token": 0.35, "gen_ai.latency.e2e": 1.25,
        "gen_ai.usage.prompt_tokens": 512, "gen_ai.usage.completion_tokens": 128})


@pytest.fixture
def send(alpha, ingest):
    project, key = alpha

    def go(service, *spans):
        ingest(key, f.request(*spans, service=service))
        materialize(project.pk, START - timedelta(hours=1), END + timedelta(hours=1))
        return project.pk
    return go


def unmeasured(entry) -> dict:
    return {gap["form"]: (gap["count"], gap["reason"]) for gap in entry["unmeasured"]}


def test_coverage_per_bucket_and_signal_names_the_form_and_what_is_missing(send):
    natives = [native_without_admitted() for _ in range(3)] + [native_without_admitted(**{"llm.run.id": "r-1"})]
    pid = send("mixed", *[genai() for _ in range(4)], genai(ttfc_s=0.4), genai(ttfc_s=0.4), *natives, vllm(), vllm())
    cov = coverage(Scope(pid, "mixed", START, END))
    # 4 + 2 genai-like client spans, 4 native, 2 vLLM: 12 attempts, every one its own run, none failed
    assert (cov["attempts"], cov["runs"], cov["successes"]) == (12, 12, 12)
    assert cov["forms"]["native"] == 4 and cov["forms"]["vllm"] == 2 and cov["forms"]["genai"] == 2
    no_ttfc_form = next(form for form in cov["forms"] if form not in ("native", "vllm", "genai"))  # what mapping
    # calls a GenAI span without time_to_first_chunk; it is an attempt all the same
    assert cov["forms"][no_ttfc_form] == 4

    ttft = cov["buckets"]["ttft"]
    # TTFT from the 2 first-chunk times, the 4 first_token events, the 2 vLLM attributes: 8 of 12
    assert (ttft["measured"], ttft["of"], ttft["share"]) == (8, 12, pytest.approx(8 / 12))
    count, reason = unmeasured(ttft)[no_ttfc_form]
    assert count == 4 and "gen_ai.response.time_to_first_chunk" in reason and "first_token" in reason
    assert f"({count}): {reason}" in ttft["note"] and ttft["note"].startswith("TTFT: 67 % of 12 successful attempts")

    # native without `admitted`: no queue wait (not 0); vLLM's time_in_queue gives it
    assert unmeasured(cov["buckets"]["t_queue"])["native"] == (4, "no `admitted` event")
    assert "vllm" not in unmeasured(cov["buckets"]["t_queue"])
    assert cov["signals"]["queue"]["unmeasured"] == cov["buckets"]["t_queue"]["unmeasured"]
    # nobody says anything about connections or the scheduler cap
    conn = cov["signals"]["connections"]
    assert (conn["measured"], conn["share"], conn["text"]) == (0, 0.0, "0 %")
    assert unmeasured(conn)["vllm"] == (2, "a server-side span says nothing about client connections")
    assert unmeasured(conn)["native"][1] == "no `llm.connection.reused` attribute"
    assert cov["signals"]["cap"]["measured"] == 0
    # t_retry (and the retries signal) only where the span says which run it belongs to: 1 of 12 runs
    retry = cov["buckets"]["t_retry"]
    assert (retry["measured"], retry["of"], retry["basis"]) == (1, 12, "runs")
    assert unmeasured(retry)["native"][0] == 3 and "llm.run.id" in unmeasured(retry)["native"][1]
    # every form here gives the total and the tokens; no stage spans at all
    assert cov["buckets"]["total"]["share"] == 1.0 and cov["buckets"]["total"]["unmeasured"] == []
    assert cov["signals"]["tokens"]["share"] == 1.0
    assert cov["signals"]["stages"]["text"] == "0 %"


def test_native_without_admitted_stores_no_queue_and_no_first_token_bucket(send, clickhouse):
    pid = send("native", native_without_admitted())
    [row] = clickhouse.query("SELECT t_queue_ms, t_first_token_ms, ttft_ms, t_retry_ms, is_final_attempt, form "
                             "FROM request_buckets FINAL WHERE project_id = {p:UInt32}", parameters={"p": pid})
    # no admission instant: queue and prefill cannot be told apart (not 0); TTFT 300 ms is measured; the run is
    # unknowable (no llm.run.id / llm.attempt / resend_count) yet the attempt is still its trace's final one
    assert row == {"t_queue_ms": None, "t_first_token_ms": None, "ttft_ms": 300.0, "t_retry_ms": None,
                   "is_final_attempt": True, "form": "native"}


def test_an_empty_window_has_unknown_shares_not_zero(alpha, clickhouse):
    cov = coverage(Scope(alpha[0].pk, "nothing", START, END))
    assert cov["attempts"] == 0 and cov["forms"] == {}
    assert {e["share"] for e in cov["buckets"].values()} == {None}
    assert cov["buckets"]["ttft"]["note"] == "TTFT: no successful attempts in this window"


def test_unknown_ttft_on_the_way_to_healthy_is_insufficient_data(send):
    pid = send("client", *[genai(duration_ms=1500 + i) for i in range(20)])
    result = run_diagnosis(Scope(pid, "client", START, END))
    # no TTFT, no stream; total p95 ~1519 ms is above the 600 ms TTFT threshold, so it bounds nothing
    assert result["verdict"] == "insufficient_data"
    steps = {s["node"]: s["answer"] for s in result["path"]}
    assert steps["ttft_p95"] == "unknown" and steps["decode_speed"] == "unknown"
    assert "gen_ai.response.time_to_first_chunk" in result["missing"][0]
    assert [r["text"] for r in result["recommendations"][:len(result["missing"])]] == result["missing"]
    assert result["coverage"]["buckets"]["ttft"]["measured"] == 0
    assert result["coverage"] == coverage(Scope(pid, "client", START, END))  # beside the evidence, the same function


def test_fast_non_streaming_service_is_healthy_through_the_total_bound(send):
    pid = send("fast", *[genai(duration_ms=300 + i) for i in range(20)])
    result = run_diagnosis(Scope(pid, "fast", START, END))
    ttft = next(s for s in result["path"] if s["node"] == "ttft_p95")
    # TTFT <= total, and total p95 (300 + 0.95 x 19 = 318.05 ms) < 600: TTFT is not high
    assert (ttft["value"], ttft["answer"], ttft["bound"]) == (None, "no", 318.05)
    assert result["verdict"] == "healthy" and result["missing"] == []


def test_measured_and_fine_is_healthy(send):
    # ttft 20 + 300 = 320 ms; decode 900 ms / 199 tokens = 4.5 ms per token
    pid = send("fine", *[f.attempt(attributes={"llm.run.id": f"r{i}", "llm.scheduler.cap": 8}) for i in range(20)])
    result = run_diagnosis(Scope(pid, "fine", START, END))
    assert result["verdict"] == "healthy" and result["missing"] == []
    assert {s["node"]: s["answer"] for s in result["path"]}["ttft_p95"] == "no"
    assert result["coverage"]["buckets"]["ttft"]["share"] == 1.0
    assert result["coverage"]["buckets"]["t_retry"]["share"] == 1.0


def test_retry_rate_is_unknown_when_no_run_is_knowable(send):
    # two attempts in one trace, no run attributes: they need not be tries of one request
    trace = f.new_trace_id()
    pid = send("agent", f.attempt(trace_id=trace), f.attempt(trace_id=trace))
    result = run_diagnosis(Scope(pid, "agent", START, END))
    assert result["evidence"]["retries"]["rate"] is None
    assert result["evidence"]["retries"]["runs"] == 1  # still one final attempt: success rate is over it
