"""Re-record the OTLP bodies the Traceloop SDK exports, for tests/clients/test_sdks.py to replay:

    .venv/bin/python -m tests.clients.record_traceloop

Runs the real traceloop-sdk 0.62.4 from its own venv (tests/clients/requirements/traceloop.txt, made by
tests/clients/venvs.py) as tests/clients/drive_tool.py sets it up (Traceloop.init with api_endpoint and the key
header, then 200 streaming calls of the openai client, 10 at a time) against the local server (2 calls in 20 fail
once with a 500: the openai client retries them inside its span). Its exporter sends to a stand-in endpoint that
keeps each /v1/traces body exactly as received: tests/clients/recorded/traceloop/NNNN.bin, beside client.json
(the client's own timing of each call and the server's answers). Recorded rather than run live: the SDK's venv is
91 packages (every instrumentation it bundles) and took 129 s to make on a 2-core machine with an empty pip
cache, and OpenLLMetry's instrumentation, whose spans it sends, runs live in test_instrumentations.py
(docs/sending-traces.md, section 6).
"""
from tests.clients import tools

if __name__ == "__main__":
    print(tools.record("traceloop", "traceloop"))
