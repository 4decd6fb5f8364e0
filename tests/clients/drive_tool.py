"""Run in a tool's own venv (tests/clients/venvs.py): one real gateway SDK or instrumentation, set up the way its
documentation tells users to, makes CALLS streaming chat calls against BASE_URL, CONCURRENCY at a time.

    python -m tests.clients.drive_tool TOOL BASE_URL CALLS CONCURRENCY

Tools: openlit, traceloop, langchain, litellm-sdk, openai (the plain openai client with no instrumentation:
a user of the LiteLLM proxy, whose spans come from the proxy), and openai-httpx (the openai client under
opentelemetry-instrumentation-httpx, each call in a native-form span of the team's own: the tries are the HTTP spans). Call N's prompt starts `call N:` (the fake server
fails the first try of some of them: tests/clients/openai_server.py FailOnce). The exporter's endpoint and key come
from LO_ENDPOINT (http://HOST:PORT) and LO_KEY, the service name from OTEL_SERVICE_NAME. Prints one JSON line:
{"calls", "failed", "ttft_ms": [...], "total_ms": [...]}, the client's own timing of each call (first content
chunk and last chunk after the call started), in call order.
"""
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

MODEL = "local-gpt"
RETRIES = 2  # each tool's own retry setting where it has one (the openai client's default)


def _messages(n: int) -> list:
    return [{"role": "user", "content": f"call {n}: say twenty words"}]


def _sdk_exporter(endpoint: str, key: str):
    """The OTel SDK set up by hand (as docs/sending-traces.md section 6 and LangChain's instrumentation docs show)."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create())
    exporter = OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", headers={"Authorization": f"Bearer {key}"})
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider


def _openai_stream(base_url: str):
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY", "test-key"), max_retries=RETRIES)

    def call(n):
        return (c.choices[0].delta.content for c in client.chat.completions.create(
            model=MODEL, messages=_messages(n), stream=True, stream_options={"include_usage": True}) if c.choices)
    return call


def _native_over_httpx(base_url: str, provider):
    """Each call in a native-form attempt span of one's own (docs/sending-traces.md section 2: a client without an
    admission queue sends `admitted` with `queued`; first and last token on the first and last chunk), the openai
    client's HTTP requests traced by opentelemetry-instrumentation-httpx: its retries are HTTP client spans under it."""
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.trace import SpanKind

    HTTPXClientInstrumentor().instrument(tracer_provider=provider)  # before the openai client makes its httpx client
    stream, tracer = _openai_stream(base_url), provider.get_tracer("my-app")

    def call(n):
        with tracer.start_as_current_span(f"chat {MODEL}", kind=SpanKind.CLIENT,
                                          attributes={"gen_ai.request.model": MODEL}) as span:
            span.add_event("queued")
            span.add_event("admitted")
            pieces = 0
            for piece in stream(n):
                if piece and not pieces:
                    span.add_event("first_token")
                pieces += bool(piece)
                yield piece
            span.add_event("last_token")
            span.set_attribute("gen_ai.usage.output_tokens", pieces)  # the server sends one word per token
            span.add_event("released")
    return call


def setup(tool: str, base_url: str, endpoint: str, key: str):
    """The tool initialised as its users do; returns call(n) -> an iterator of content pieces."""
    service = os.environ.get("OTEL_SERVICE_NAME", "")
    if tool == "openlit":
        import openlit

        openlit.init(application_name=service, otlp_endpoint=endpoint, otlp_headers=f"Authorization=Bearer {key}")
        return _openai_stream(base_url)
    if tool == "traceloop":
        from traceloop.sdk import Traceloop

        Traceloop.init(app_name=service, api_endpoint=endpoint, headers={"Authorization": f"Bearer {key}"},
                       telemetry_enabled=False)
        return _openai_stream(base_url)
    if tool == "langchain":
        from langchain_openai import ChatOpenAI
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument(tracer_provider=_sdk_exporter(endpoint, key))
        llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="test-key", streaming=True, max_retries=RETRIES,
                         stream_usage=True)
        return lambda n: (chunk.content for chunk in llm.stream(_messages(n)))
    if tool == "litellm-sdk":
        import litellm

        litellm.callbacks = ["otel"]  # reads OTEL_EXPORTER, OTEL_ENDPOINT, OTEL_HEADERS (set by the caller)
        return lambda n: (c.choices[0].delta.content for c in litellm.completion(
            model=f"openai/{MODEL}", api_base=base_url, api_key="test-key", messages=_messages(n), stream=True,
            stream_options={"include_usage": True}, num_retries=RETRIES) if c.choices)
    if tool == "openai":
        return _openai_stream(base_url)
    if tool == "openai-httpx":
        return _native_over_httpx(base_url, _sdk_exporter(endpoint, key))
    raise SystemExit(f"unknown tool {tool!r}")


def timed(call, n: int) -> tuple:
    """(ms to the first content piece, ms to the last, None when the call failed) of call n."""
    start, first = time.perf_counter(), None
    try:
        for piece in call(n):
            if piece and first is None:
                first = time.perf_counter()
    except Exception as error:  # noqa: BLE001 - a failed call is reported, not raised
        print(f"call {n} failed: {error!r}", file=sys.stderr)
        return None, None
    end = time.perf_counter()
    return (first - start) * 1000 if first else None, (end - start) * 1000


def shutdown(tool: str) -> None:
    """Flush what the tool's exporter still holds, as its process exit would."""
    from opentelemetry import trace

    if tool == "litellm-sdk":  # LiteLLM logs a call (ends its span) in its logging threads after the stream ends
        from litellm.litellm_core_utils.thread_pool_executor import executor

        executor.shutdown(wait=True)
    provider = trace.get_tracer_provider()
    if hasattr(provider, "force_flush"):
        provider.force_flush()


def main(tool: str, base_url: str, calls: int, concurrency: int) -> None:
    call = setup(tool, base_url, os.environ.get("LO_ENDPOINT", ""), os.environ.get("LO_KEY", ""))
    with ThreadPoolExecutor(concurrency) as pool:
        timings = list(pool.map(lambda n: timed(call, n), range(calls)))
    shutdown(tool)
    print(json.dumps({"calls": calls, "failed": sum(t[1] is None for t in timings),
                      "ttft_ms": [t[0] for t in timings], "total_ms": [t[1] for t in timings]}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
