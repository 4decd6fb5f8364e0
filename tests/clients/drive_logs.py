"""Run in its own process: an OpenAI-client instrumentation with its GenAI events sent as OTLP log records, the
real openai client and the real OTel SDK exporters (OTLP/HTTP).

    python -m tests.clients.drive_logs INSTRUMENTATION BASE_URL STREAMED PLAIN

The trace exporter reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _HEADERS, the log exporter
OTEL_EXPORTER_OTLP_LOGS_ENDPOINT / _HEADERS, as the docs set them (docs/sending-traces.md "8. Logs"). Events, as
each instrumentation is set up to send them: OpenLLMetry with use_legacy_attributes=False (gen_ai.*.message and
gen_ai.choice), openai-v2 with OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT=true in the environment
(gen_ai.client.inference.operation.details). Makes STREAMED streaming chat calls (with usage) and PLAIN
non-streaming ones.
"""
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.clients.drive import call


def _instrumentor(name: str):
    if name == "openllmetry":
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        return OpenAIInstrumentor(use_legacy_attributes=False)
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    return OpenAIInstrumentor()


def main(name: str, base_url: str, streamed: int, plain: int) -> None:
    resource = Resource.create()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(tracer_provider)
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter()))
    instrumentor = _instrumentor(name)
    instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    call(base_url, streamed, plain)
    instrumentor.uninstrument()
    tracer_provider.shutdown()
    logger_provider.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
