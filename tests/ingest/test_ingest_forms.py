"""Ingest status reports, per service, the span forms its attempts came in, one per span id."""
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests import factories as f

pytestmark = pytest.mark.django_db


def test_ingest_status_counts_attempts_per_service_and_form_once_each(client, alpha, ingest, clickhouse):
    _, key = alpha
    chunks = [("gen_ai.content.completion.chunk", ms) for ms in (200, 400)]
    streamed = f.span(name="openai.chat", kind=Span.SPAN_KIND_CLIENT, events=chunks,
                      attributes={"gen_ai.request.model": "m", "gen_ai.is_streaming": True})
    plain = f.span(name="openai.chat", kind=Span.SPAN_KIND_CLIENT,
                   attributes={"gen_ai.request.model": "m", "gen_ai.is_streaming": False})
    llm = f.span(name="ChatCompletion", attributes={"openinference.span.kind": "LLM", "llm.model_name": "m"})
    chain = f.span(name="chain", attributes={"openinference.span.kind": "CHAIN"})  # not a model call
    bare = f.span(name="call", attributes={"llm.run.id": "r"})  # an attempt by its attributes, no timing form
    clickhouse.command("SYSTEM STOP MERGES spans")
    try:
        for _ in range(2):  # re-sent: each span id counts once
            ingest(key, f.request(streamed, plain, service="chat"), f.request(llm, chain, bare, service="rag"))
        status = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {key}").json()
    finally:
        clickhouse.command("SYSTEM START MERGES spans")
    assert status["forms"] == {"chat": {"openllmetry": 2}, "rag": {"none": 1, "openinference": 1}}
    assert (status["spans_stored"], status["attempts_stored"]) == (5, 4)
