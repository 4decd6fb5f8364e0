"""Run in its own process: one third-party instrumentation, the real openai client, the real OTel SDK exporter.

    python -m tests.clients.drive INSTRUMENTATION BASE_URL STREAMED PLAIN

Instrumentations patch the openai module for the whole process, so each run gets a fresh one. The exporter is
set up the way the README tells users to: from OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (http/protobuf or grpc),
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_HEADERS and OTEL_SERVICE_NAME; the official
instrumentation also reads OTEL_SEMCONV_STABILITY_OPT_IN at instrument time. PROTOCOL=console prints the spans.
Makes STREAMED streaming chat calls (with usage) and PLAIN non-streaming ones, in that order, one trace each.
"""
import os
import sys

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor


def _exporter():
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    elif protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    elif protocol == "console":
        return ConsoleSpanExporter()
    else:
        raise SystemExit(f"unsupported OTEL_EXPORTER_OTLP_TRACES_PROTOCOL {protocol!r}")
    return OTLPSpanExporter()


def _instrumentor(name: str):
    if name == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    elif name == "openai-v2":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    elif name == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
    else:
        raise SystemExit(f"unknown instrumentation {name!r}")
    return OpenAIInstrumentor()


def call(base_url: str, streamed: int, plain: int) -> None:
    """STREAMED streaming chat calls (with usage), then PLAIN non-streaming ones, with the real openai client."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    messages = [{"role": "user", "content": "say ten words"}]
    for _ in range(streamed):
        stream = client.chat.completions.create(
            model="local-gpt", messages=messages, stream=True, stream_options={"include_usage": True})
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text.startswith("w0 "), text
    for _ in range(plain):
        reply = client.chat.completions.create(model="local-gpt", messages=messages)
        assert reply.usage.completion_tokens > 0


def main(name: str, base_url: str, streamed: int, plain: int) -> None:
    provider = TracerProvider(resource=Resource.create())
    provider.add_span_processor(SimpleSpanProcessor(_exporter()))
    trace.set_tracer_provider(provider)
    instrumentor = _instrumentor(name)
    instrumentor.instrument(tracer_provider=provider)
    call(base_url, streamed, plain)
    instrumentor.uninstrument()
    provider.shutdown()  # SimpleSpanProcessor exported each span as it ended; this flushes the exporter


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
