"""LiteLLM 1.108.7 as teams run it, from its pinned package (tests/clients/requirements/litellm.txt) in its own venv:
the proxy (its CLI, `callbacks: ["otel"]`, `num_retries: 2`) with its v1 spans and with LITELLM_OTEL_V2=true, called
by the plain openai client; and the SDK's `litellm.completion(num_retries=2)`. Each makes 200 streaming calls
against the local server (tests/clients/tools.py: 2 in 20 fail once with a 500 and are retried) and exports
OTLP/HTTP to the live product with `OTEL_HEADERS=Authorization=Bearer%20<key>`, as LiteLLM's docs write it (it
does not URL-decode it). Read back through the diagnosis API (docs/sending-traces.md, section 6).
"""
from datetime import datetime, timedelta, timezone

import pytest

from tests.clients import tools
from tests.clients.tools import CALLS, RETRIED, Expect

pytestmark = pytest.mark.slow
# v1: each failed try is its own ERROR span and the span of the call that succeeded holds it; no first-token time, so
# nothing tells decode from the rest: 20 retries in 200 runs is the one thing measured (retry rate 0.10)
V1 = Expect(attempts=CALLS + RETRIED, failed=RETRIED, ttft=False, verdicts=("retry_amplification", "insufficient_data"))
# v2: each try a CLIENT `chat …` span with gen_ai.response.time_to_first_chunk: TTFT, t_stream and decode measured
V2 = Expect(attempts=CALLS + RETRIED, failed=RETRIED, ttft=True, verdicts=("decode_throughput",))
# the SDK: one span per call, its retries inside it; no first-token time
SDK = Expect(attempts=CALLS, failed=0, ttft=False, verdicts=("insufficient_data",))


@pytest.fixture
def product(transactional_db, clickhouse, alpha, live_server, client):
    """(project, key, the product's base URL, a Django test client): transactional, so the server's threads see the key."""
    project, key = alpha
    return project, key, live_server.url, client


def _otel_env(url: str, key: str, service: str, **extra) -> dict:
    return tools.clean_env(OTEL_EXPORTER="otlp_http", OTEL_ENDPOINT=f"{url}/v1/traces",
                           OTEL_HEADERS=f"Authorization=Bearer%20{key}", OTEL_SERVICE_NAME=service, **extra)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_proxy_counts_each_call_once_and_each_failed_try_as_an_attempt_of_its_run(product, version, tmp_path):
    project, key, url, http = product
    service, since = f"litellm-proxy-{version}", datetime.now(timezone.utc) - timedelta(minutes=1)
    env = _otel_env(url, key, service, **({"LITELLM_OTEL_V2": "true"} if version == "v2" else {}))
    with tools.upstream() as server, tools.litellm_proxy(server.url, env, tmp_path) as proxy:
        seen = tools.drive("litellm", "openai", proxy, tools.clean_env(OPENAI_API_KEY=tools.PROXY_KEY))
        # TRICKY: LiteLLM logs a call (ends its span) in a worker after the stream; on a busy machine that worker lags,
        # and stopping the proxy when the client is done lost up to 19 of 220 attempts: wait for them first
        tools.settle(project.id, service, quiet_s=8)
    tools.settle(project.id, service)  # and what the exporter flushed when the proxy stopped
    answer = tools.diagnosis(http, project.id, key, service, since)
    figures = tools.check(answer, seen, V1 if version == "v1" else V2, server.tries, served_ms=server.first_chunk_ms)
    tools.report(service, figures)
    t_retry = answer["evidence"]["retries"]["t_retry"]
    assert t_retry["count"] == CALLS  # every run's tries are known (litellm.call_id)
    if version == "v2":  # each try its own span: the back-off before the retry measured
        assert answer["evidence"]["retries"]["rate"] == pytest.approx(RETRIED / CALLS) and t_retry["p99"] > 100
    else:  # the call's span holds its failed try and the back-off: t_retry 0, the whole call its total
        assert t_retry["p99"] == 0 and answer["evidence"]["buckets"]["total"]["p99"] > 1.5 * tools.TIMING.total_s * 1000


def test_the_sdk_counts_each_call_once_with_its_retries_inside(product):
    project, key, url, http = product
    service, since = "litellm-sdk", datetime.now(timezone.utc) - timedelta(minutes=1)
    with tools.upstream() as server:
        seen = tools.drive("litellm", "litellm-sdk", server.url, _otel_env(url, key, service,
                                                                            LITELLM_LOCAL_MODEL_COST_MAP="True"))
    tools.settle(project.id, service)
    answer = tools.diagnosis(http, project.id, key, service, since)
    tools.report(service, tools.check(answer, seen, SDK, server.tries))
