"""Run in the `gateway` venv (tests/clients/venvs.py): the two layers' gateway and its client (tests/clients/test_layers_propagated.py).

    python -m tests.clients.layered_gateway serve PORT ENGINE_BASE_URL BEFORE_MS AFTER_MS
    python -m tests.clients.layered_gateway call GATEWAY_URL CALLS [stream]

serve: a Flask app with Flask's OTel instrumentation (its SERVER span) answering POST /v1/chat/completions: its own
work (BEFORE_MS, as an auth or guardrail check), then one streaming call to the engine with the openai client
(OpenInference's span: the gateway's attempt; httpx's OTel instrumentation under it injects `traceparent` with the
SDK's propagator), then AFTER_MS more of its own, then the whole answer as one JSON body; GET /health answers "ok".
Stops on SIGTERM, after its spans are exported.
call: the openai client (OpenInference and httpx instrumented, so the gateway continues its trace) makes CALLS
chat calls to the gateway (streaming with `stream`), one after the other, with GATEWAY_KEY as its API key; prints one
JSON line {"calls", "total_ms": [...]}.

Both export to LO_ENDPOINT (http://HOST:PORT) with LO_KEY, as service OTEL_SERVICE_NAME.
"""
import json
import os
import signal
import sys
import time


def _provider():
    """The SDK as its docs set it up: a batch processor (exporting off the request path) to the product. It exports when
    the process stops (a 2-minute schedule): the test's few spans need no earlier export, and the product's work on
    one would share the machine with the timed calls."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider = TracerProvider(resource=Resource.create())
    exporter = OTLPSpanExporter(endpoint=f"{os.environ['LO_ENDPOINT']}/v1/traces",
                                headers={"Authorization": f"Bearer {os.environ['LO_KEY']}"})
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=120_000))
    trace.set_tracer_provider(provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    HTTPXClientInstrumentor().instrument(tracer_provider=provider)
    return provider


def serve(port: int, engine_url: str, before_ms: float, after_ms: float) -> None:
    import openai
    from flask import Flask, jsonify, request
    from opentelemetry.instrumentation.flask import FlaskInstrumentor

    provider = _provider()
    app = Flask("layered_gateway")
    FlaskInstrumentor().instrument_app(app, tracer_provider=provider)
    engine = openai.OpenAI(base_url=engine_url, api_key="engine-key", max_retries=0)

    @app.get("/health")
    def health():
        return "ok"

    @app.post("/v1/chat/completions")
    def chat():
        body = request.get_json()
        time.sleep(before_ms / 1000)  # the gateway's own work before its call
        stream = engine.chat.completions.create(model=body["model"], messages=body["messages"], stream=True,
                                                stream_options={"include_usage": True})
        text, usage = "", None
        for chunk in stream:
            text += "".join(c.delta.content or "" for c in chunk.choices)
            usage = chunk.usage or usage
        time.sleep(after_ms / 1000)  # ... and after it
        return jsonify({"id": "chatcmpl-gw", "object": "chat.completion", "created": int(time.time()),
                        "model": body["model"], "usage": usage.model_dump(),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                     "finish_reason": "stop"}]})

    def stop(*_):
        provider.shutdown()  # exports what the batch processor holds
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    app.run(host="127.0.0.1", port=port, threaded=True)


def call(gateway_url: str, calls: int, stream: bool = False) -> None:
    import openai

    provider = _provider()
    client = openai.OpenAI(base_url=gateway_url, api_key=os.environ.get("GATEWAY_KEY", "gateway-key"), max_retries=0)
    totals = []
    for n in range(calls):
        began = time.perf_counter()
        messages = [{"role": "user", "content": f"call {n}: say ten words"}]
        if stream:
            chunks = client.chat.completions.create(model="local-gpt", messages=messages, stream=True)
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices).startswith("w0 ")
        else:
            reply = client.chat.completions.create(model="local-gpt", messages=messages)
            assert reply.usage.completion_tokens > 0
        totals.append((time.perf_counter() - began) * 1000)
    provider.shutdown()
    print(json.dumps({"calls": calls, "total_ms": totals}))


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
    else:
        call(sys.argv[2], int(sys.argv[3]), stream=sys.argv[4:] == ["stream"])
