"""No advice without evidence (issue 33 items 3 and 6): a span that says it streamed (LiteLLM v1's `llm.is_streaming`)
but records no first token is not told to stream its calls nor taken for a non-streaming call; the missing-signal hints
name the instrumentation setting that records a first chunk (analysis/reads/coverage.py REASONS, the insufficient_data fix)."""
import re
from datetime import timedelta

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from analysis.diagnosis.service import run_diagnosis
from analysis.reads.coverage import coverage
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests import factories as f

START, END = f.BASE - timedelta(minutes=5), f.BASE + timedelta(minutes=30)


def _litellm_v1(i: int) -> Span:
    """LiteLLM 1.108's v1 `litellm_request` span of a streamed call (measured): llm.is_streaming 'True', no first token."""
    return f.span(name="litellm_request", start_ns=f.BASE_NS + i * 10_000 * f.MS, duration_ms=1300 + i,
                  kind=Span.SPAN_KIND_INTERNAL, attributes={
                      "gen_ai.request.model": "local-gpt", "litellm.call_id": f"call-{i}", "llm.is_streaming": "True",
                      "gen_ai.operation.name": "acompletion", "gen_ai.system": "openai",
                      "gen_ai.usage.input_tokens": 8, "gen_ai.usage.output_tokens": 21})


def test_a_span_that_says_it_streamed_is_not_told_to_stream(alpha, ingest):
    project, key = alpha
    ingest(key, f.request(*[_litellm_v1(i) for i in range(40)], service="litellm-proxy"))
    materialize(project.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    cov = coverage(Scope(project.pk, "litellm-proxy", START, END))
    [ttft_gap] = cov["buckets"]["ttft"]["unmeasured"]
    [stream_gap] = cov["buckets"]["t_stream"]["unmeasured"]
    assert (ttft_gap["form"], ttft_gap["count"]) == ("openllmetry", 40)
    for gap in (ttft_gap, stream_gap):  # both cases named, and the setting that records a first chunk
        assert "a streamed one whose instrumentation records no chunks" in gap["reason"]
        assert "`LITELLM_OTEL_V2=true` records `gen_ai.response.time_to_first_chunk`" in gap["reason"]
        assert "non-streaming call?" not in gap["reason"]
    result = run_diagnosis(Scope(project.pk, "litellm-proxy", START, END))
    assert result["verdict"] == "insufficient_data"
    texts = [r["text"] for r in result["recommendations"]]
    # no fix asks to stream (what the span says it did); "Stream time is not measured" says what is missing
    assert not [t for t in texts if re.search(r"\bstream (the|your) calls|^stream (from|the|your)", t.lower())], texts
    assert "LITELLM_OTEL_V2=true" in result["missing"][0]
    assert any("LiteLLM: LITELLM_OTEL_V2=true" in t for t in texts), texts


def test_a_genai_span_without_a_first_chunk_names_the_instrumentations_that_record_one(alpha, ingest):
    """The official openai-v2 instrumentation (2.4b0) says neither a first chunk nor whether the call streamed."""
    project, key = alpha
    calls = [f.span(name="chat local-gpt", start_ns=f.BASE_NS + i * 10_000 * f.MS, duration_ms=1300,
                    kind=Span.SPAN_KIND_CLIENT, attributes={"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                                                            "gen_ai.request.model": "local-gpt"}) for i in range(3)]
    ingest(key, f.request(*calls, service="openai-v2-app"))
    materialize(project.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    [gap] = coverage(Scope(project.pk, "openai-v2-app", START, END))["buckets"]["ttft"]["unmeasured"]
    assert gap["form"] == "genai" and gap["reason"].startswith(
        "no `gen_ai.response.time_to_first_chunk` and no `first_token` event: a call that did not stream, or an "
        "instrumentation that records neither")
    assert "OpenLLMetry's and OpenInference's openai instrumentations record it" in gap["reason"]
