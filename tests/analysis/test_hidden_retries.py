"""Hidden retries (issue 33 item 5): where retries inside one client span are not visible (no HTTP client children,
no run keys), coverage says so, and a tail the verdict does not explain is named as possibly those retries: a finding
of kind possible_cause, never a verdict (analysis/diagnosis/flowchart.py hidden_retry_findings; docs/diagnosis.md)."""
from datetime import timedelta

import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from analysis.diagnosis.flowchart import diagnose
from analysis.diagnosis.service import run_diagnosis
from analysis.reads.coverage import coverage, hidden_retry_runs
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests import factories as f
from tests.analysis import evidence_samples as samples

BLANK = {"p50": None, "p95": None, "p99": None, "mean": None, "count": 0}
START, END = f.BASE - timedelta(minutes=5), f.BASE + timedelta(minutes=30)


def hidden(result) -> list[dict]:
    return [x for x in result["findings"] if x["code"] == "hidden_retries"]


def test_a_ttft_tail_under_slow_decode_names_hidden_retries_and_keeps_the_verdict():
    # Traceloop's recorded openai calls: TTFT p50 309 ms, p95 869 ms (the retried calls' failed try and back-off
    # inside the span), decode 57 ms per token; none of the 2400 runs shows its tries
    result = diagnose(samples.decode_throughput(buckets__ttft=samples.bucket(309.0, 869.0), retries__hidden_runs=2400))
    assert result["verdict"] == "decode_throughput"  # decode is slow all the same
    [finding] = hidden(result)
    # 869 / 309 -> 2.81, above 2
    assert (finding["kind"], finding["value"], finding["threshold"], finding["hidden_runs"]) == (
        "possible_cause", 2.81, 2.0, 2400)
    assert finding["message"].startswith("possibly hidden retries: TTFT p95 869 ms is 2.8 times its p50 309 ms")
    assert "which slow decode does not" in finding["message"] and "opentelemetry-instrumentation-httpx" in finding["message"]


def test_an_unexplained_ttft_tail_names_hidden_retries_as_possible_not_as_the_verdict():
    # TTFT p95 900 ms over 300 (3x), decode normal, nothing else: the walk ends at ttft_unexplained
    result = diagnose(samples.healthy(buckets__ttft=samples.bucket(300.0, 900.0), retries__hidden_runs=2400))
    assert result["verdict"] == "ttft_unexplained"
    assert [x["value"] for x in hidden(result)] == [3.0]


def test_without_ttft_the_total_tail_is_read():
    # a client form without first-chunk times: insufficient_data, total p50 1.5 s, p95 4 s (2.67x)
    result = diagnose(samples.healthy(buckets__ttft=BLANK, buckets__t_stream=BLANK, buckets__total=samples.bucket(
        1500.0, 4000.0), decode__ms_per_output_token_p50=None, retries__hidden_runs=2400))
    assert result["verdict"] == "insufficient_data"
    [finding] = hidden(result)
    assert finding["message"].startswith("possibly hidden retries: total p95 4 s is 2.7 times its p50 1.5 s")


@pytest.mark.parametrize("changes", [
    {"retries__hidden_runs": 0},  # every run's tries are visible
    {"retries__hidden_runs": None},  # not known (evidence without the coverage)
    {"retries__hidden_runs": 2400, "buckets__ttft": samples.bucket(300.0, 590.0)},  # no tail: 590 / 300 < 2
])
def test_no_hidden_retries_without_hidden_runs_or_without_a_tail(changes):
    result = diagnose(samples.decode_throughput(**changes))
    assert hidden(result) == []


def test_a_verdict_that_explains_the_tail_names_no_hidden_retries():
    result = diagnose(samples.queue_backlog(retries__hidden_runs=2400))
    assert result["verdict"] == "queue_backlog" and hidden(result) == []


def _call(duration_ms: float, start_ns: int) -> Span:
    return f.span(name="chat gpt-4o", start_ns=start_ns, duration_ms=duration_ms, kind=Span.SPAN_KIND_CLIENT,
                  attributes={"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                              "gen_ai.request.model": "gpt-4o", "tenant.id": "acme"})


def _http(parent: Span) -> Span:
    return f.span(name="POST", start_ns=parent.start_time_unix_nano + 2 * f.MS, duration_ms=5, trace_id=parent.trace_id,
                  parent=parent, kind=Span.SPAN_KIND_CLIENT, attributes={"http.method": "POST", "http.status_code": 200})


def _calls(alpha, ingest, service: str, with_http: bool) -> int:
    """40 genai calls 10 s apart, 36 of 1.5 s and 4 of 4 s (a tail: total p95 4 s, p50 1.5 s)."""
    project, key = alpha
    calls = [_call(4000 if i % 10 == 9 else 1500, f.BASE_NS + i * 10_000 * f.MS) for i in range(40)]
    ingest(key, f.request(*calls, *([_http(c) for c in calls] if with_http else []), service=service))
    materialize(project.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    return project.pk


def test_client_spans_without_http_children_say_their_retries_are_not_visible(alpha, ingest):
    pid = _calls(alpha, ingest, "chat-app", with_http=False)
    cov = coverage(Scope(pid, "chat-app", START, END))
    [gap] = cov["signals"]["retries"]["unmeasured"]
    assert (gap["form"], gap["count"]) == ("genai", 40)
    assert gap["reason"].startswith("retries inside one client span are not visible")
    assert cov["buckets"]["t_retry"]["unmeasured"] == [gap] and hidden_retry_runs(cov) == 40
    result = run_diagnosis(Scope(pid, "chat-app", START, END))
    assert result["verdict"] == "insufficient_data"  # no confident verdict on missing evidence
    assert result["evidence"]["retries"]["hidden_runs"] == 40
    # 4000 / 1500 -> 2.67
    assert [(x["value"], x["hidden_runs"]) for x in hidden(result)] == [(2.67, 40)]


def test_with_http_children_the_tries_are_seen_and_nothing_is_hidden(alpha, ingest):
    pid = _calls(alpha, ingest, "chat-httpx", with_http=True)
    cov = coverage(Scope(pid, "chat-httpx", START, END))
    assert cov["signals"]["retries"]["share"] == 1.0 and hidden_retry_runs(cov) == 0
    result = run_diagnosis(Scope(pid, "chat-httpx", START, END))
    assert result["evidence"]["retries"]["hidden_runs"] == 0 and hidden(result) == []
    assert result["evidence"]["retries"]["rate"] == 0  # 40 runs of one try each, seen
