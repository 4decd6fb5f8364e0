"""The flowchart on hand-made evidence: every verdict from its preset's calibration numbers, and the edges."""
import pytest
from django.core.exceptions import ImproperlyConfigured

from analysis.diagnosis import FLOWCHART, NODES, VERDICTS, Node, diagnose, evaluate, metric
from analysis.evidence_types import Evidence
from analysis.recommendations import FIXES
from analysis.thresholds import DEFAULT, configured
from tests.analysis import evidence_samples as samples


def answers(result: dict) -> dict:
    return {step["node"]: step["answer"] for step in result["path"]}


def codes(result: dict) -> set:
    return {finding["code"] for finding in result["findings"]}


@pytest.mark.parametrize("preset,verdict", [
    ("healthy", "healthy"),
    ("queue_backlog", "queue_backlog"),
    ("admission_gap", "admission_gap"),
    ("retry_amplification", "retry_amplification"),
    ("preprocessing", "preprocessing"),
    ("prefill_pressure", "prefill_pressure"),
    ("decode_throughput", "decode_throughput"),
    ("connection_churn", "connection_churn"),
    ("post_processing", "post_processing"),
    ("network_overhead", "network_overhead"),
    ("noisy_tenant", "queue_backlog"),  # noisy_tenant is not a verdict code: a backlog with a tenant finding
])
def test_each_preset_gets_its_verdict(preset, verdict):
    result = diagnose(getattr(samples, preset)())
    assert result["verdict"] == verdict
    assert result["recommendations"] == FIXES[verdict] or verdict == "queue_backlog"


def test_healthy_traffic_has_no_findings_and_no_fixes():
    result = diagnose(samples.healthy())
    assert result["findings"] == []
    assert result["recommendations"] == []
    # queue p95 0, share 0, prep 0.20, t_post share 0.005, TTFT 256 ms, 16 ms/token, retry rate 0.006: all "no"
    assert set(answers(result).values()) == {"no"}
    assert [s["node"] for s in result["path"]] == [
        "queue_p95", "queue_share", "prep_share", "post_share", "ttft_p95", "decode_speed", "retry_rate"]


def test_path_steps_carry_question_value_threshold_answer():
    step = diagnose(samples.queue_backlog())["path"][0]
    assert step == {"node": "queue_p95", "question": "Is queue wait high (t_queue p95, ms)?", "value": 43600.0,
                    "threshold": 1000.0, "answer": "yes"}


def test_queue_backlog_path_checks_gap_then_retries():
    result = diagnose(samples.queue_backlog())
    # gap_fraction 0.0 < 0.5 (slots full), retry rate 0.006 < 0.10
    assert answers(result) == {"queue_p95": "yes", "idle_slots": "no", "retry_rate_backlog": "no"}


def test_admission_gap_does_not_also_report_the_backlog_it_explains():
    result = diagnose(samples.admission_gap())
    assert answers(result)["idle_slots"] == "yes"
    assert "queue_backlog" not in codes(result)


def test_retry_amplification_needs_retries_to_follow_queue_depth():
    assert diagnose(samples.retry_amplification())["path"][-1]["node"] == "retry_queue_spearman"
    result = diagnose(samples.retry_amplification(retries__spearman_retries_queue_depth=0.1))
    # retries high but unrelated to queue depth: the backlog is the cause, the retries a finding
    assert result["verdict"] == "queue_backlog"
    assert "retry_amplification" in codes(result)


def test_retries_without_backlog_are_retry_amplification():
    result = diagnose(samples.healthy(retries__rate=0.30))
    assert result["verdict"] == "retry_amplification"
    assert result["path"][-1]["node"] == "retry_rate"


def test_prefill_ratio_compares_longest_and_shortest_segments():
    step = next(s for s in diagnose(samples.prefill_pressure())["path"] if s["node"] == "prefill_ratio")
    # 4-16k 6600 ms / <1k 330 ms = 20 (>16k has no requests, so it is skipped)
    assert step["value"] == 20.0 and step["answer"] == "yes"


def test_churn_needs_both_reuse_and_correlation():
    result = diagnose(samples.connection_churn(churn__spearman_ttft_p95=0.1))
    # 0.55 new connections per success but TTFT does not follow them: falls through to prefill_pressure
    assert answers(result)["new_connections"] == "yes" and answers(result)["churn_spearman"] == "no"
    assert result["verdict"] == "prefill_pressure"
    assert "connection_churn" not in codes(result)


def test_high_ttft_with_slow_decode_is_decode_throughput():
    result = diagnose(samples.connection_churn(decode__ms_per_output_token_p50=57.0))
    assert result["verdict"] == "decode_throughput"
    assert "connection_churn" in codes(result)


def _unknown(data):
    """The same JSON with every number None."""
    if isinstance(data, dict):
        return {k: _unknown(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_unknown(v) for v in data]
    return data if isinstance(data, str) else None


def test_all_none_evidence_is_healthy_with_unknown_answers():
    result = diagnose(Evidence.from_json(_unknown(samples.HEALTHY)))
    assert result["verdict"] == "healthy"
    assert set(answers(result).values()) == {"unknown"}
    assert result["findings"] == []


def test_empty_evidence_is_healthy():
    result = diagnose(samples.no_requests())
    assert result["verdict"] == "healthy"
    assert all(step["value"] is None for step in result["path"])


def test_noisy_tenant_is_a_backlog_with_tenant_findings():
    result = diagnose(samples.noisy_tenant())
    noisy = next(f for f in result["findings"] if f["code"] == "noisy_neighbour")
    # holds 63% of busy slots with 600 / 2400 = 25% of arrivals
    assert noisy["tenant"] == "noisy" and noisy["value"] == 0.63
    assert "25% of arrivals" in noisy["message"] and "3500 ms" in noisy["message"]
    # alice's TTFT p95 3800 ms vs the service's 256 ms: 14.8x >= 3x
    outliers = {f["tenant"] for f in result["findings"] if f["code"] == "tenant_outlier"}
    assert outliers == {"alice", "bob"}
    assert any("quotas" in fix for fix in result["recommendations"])


def test_tenant_holding_slots_in_proportion_to_its_traffic_is_not_noisy():
    evidence = samples.noisy_tenant(tenants__0__count=10_000)  # 10000 / 11800 = 85% of arrivals >= 63% of slots
    assert "noisy_neighbour" not in codes(diagnose(evidence))


def test_small_tenants_are_not_outliers():
    tiny = samples.tail("tiny", 5, 5000.0, 6000.0, 9000.0, 9500.0)
    evidence = samples.healthy(tenants=samples.HEALTHY["tenants"] + [tiny])
    assert diagnose(evidence)["findings"] == []


def test_two_causes_give_a_verdict_and_a_finding():
    result = diagnose(samples.queue_backlog(dominance__t_post={"p50_share": 0.38, "p95_share": 0.3}))
    assert result["verdict"] == "queue_backlog"
    finding = next(f for f in result["findings"] if f["code"] == "post_processing")
    assert finding["kind"] == "cause"
    assert finding["checks"] == [{"node": "post_share", "value": 0.38, "threshold": 0.15}]


def test_low_success_rate_is_a_finding():
    assert "low_success_rate" not in codes(diagnose(samples.retry_amplification()))  # 0.97 >= 0.95
    low = next(f for f in diagnose(samples.retry_amplification(success_rate=0.9))["findings"]
               if f["code"] == "low_success_rate")
    assert low["value"] == 0.9 and low["threshold"] == 0.95


def test_thresholds_override_from_settings(settings):
    settings.ANALYSIS_THRESHOLDS = {"ttft_p95_ms": 200}
    thresholds = configured()
    assert thresholds.ttft_p95_ms == 200.0 and thresholds.queue_p95_ms == DEFAULT.queue_p95_ms
    # healthy TTFT p95 256 ms is now "high"; nothing explains it, so the flowchart's TTFT leaf answers
    assert diagnose(samples.healthy(), thresholds)["verdict"] == "prefill_pressure"


def test_unknown_threshold_names_are_refused(settings):
    settings.ANALYSIS_THRESHOLDS = {"queue_p95": 1, "bogus": 2}
    with pytest.raises(ImproperlyConfigured, match="bogus, queue_p95"):
        configured()


def test_flowchart_nodes_lead_to_nodes_or_verdicts():
    for node in FLOWCHART:
        assert node.yes in NODES or node.yes in VERDICTS
        assert node.no in NODES or node.no in VERDICTS
        assert hasattr(DEFAULT, node.threshold)
    reachable = {n.yes for n in FLOWCHART} | {n.no for n in FLOWCHART}
    assert set(VERDICTS) <= reachable
    assert set(FIXES) == set(VERDICTS)


def test_a_misspelt_evidence_name_raises_instead_of_reading_unknown():
    typo = Node("queue_p95", "?", metric(lambda e: e.buckets.t_queue.p59), "queue_p95_ms", yes="healthy", no="healthy")
    with pytest.raises(AttributeError, match="p59"):
        evaluate(typo, samples.queue_backlog(), DEFAULT)
    with pytest.raises(AttributeError):  # a bare dict is not evidence either
        diagnose(samples.HEALTHY)
