"""The verdicts registry: a fake verdict registered in one place shows on every surface, and the built-in records agree
with the flowchart that produces them."""
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from alerts.kinds import KINDS
from alerts.models import AlertRule
from analysis.diagnosis import flowchart
from analysis.diagnosis.flowchart import INSUFFICIENT, Node, diagnose, evaluate, metric
from analysis.diagnosis.thresholds import DEFAULT
from analysis.diagnosis.verdicts import REGISTRY, parts, register
from analysis.diagnosis.verdicts.record import B1, SOURCES, Verdict, fix
from analysis.incidents import causes, scope
from analysis.models import WindowDiagnosis
from dashboard.evidence_links import TITLES, verdict_pages
from tests.analysis import evidence_samples as samples
from tests.analysis.test_incident_explain import _sums
from tests.dashboard.conftest import START

FAKE = Verdict(
    "tokenizer_stall", nodes=("tokenizer_stall_check",), thresholds=("queue_p95_ms",),
    fixes=(fix("Warm the tokenizer before the first request", ("000", B1)),),
    present=(("tokenizer_stall_check",),), bucket="t_conn", signatures=("route",),
    queue_nodes=("tokenizer_stall_check",), pages=(("connections", {}),))
# asked first: a connection time p95 of 1 s or more (queue_p95_ms' default) ends the walk at the fake verdict
NODE = Node("tokenizer_stall_check", "Does the tokenizer stall (t_conn p95, ms)?",
            metric(lambda e: e.buckets.t_conn.p95), "queue_p95_ms", yes="tokenizer_stall", no="queue_p95", unit="ms")


@pytest.fixture
def fake(monkeypatch):
    """FAKE registered, and NODE first in a temporary flowchart; both gone afterwards."""
    register(FAKE)
    monkeypatch.setattr(flowchart, "FLOWCHART", [NODE, *flowchart.FLOWCHART])
    monkeypatch.setattr(flowchart, "NODES", {NODE.name: NODE, **flowchart.NODES})
    yield FAKE
    del REGISTRY[FAKE.code]


def stalled(**changes):
    return samples.healthy(buckets__t_conn=samples.bucket(900.0, 2000.0), **changes)


def test_the_diagnosis_ends_at_the_fake_verdict_with_its_fixes(fake):
    result = diagnose(stalled())
    assert result["verdict"] == "tokenizer_stall"
    assert [(s["node"], s["answer"]) for s in result["path"]] == [("tokenizer_stall_check", "yes")]
    assert result["recommendations"] == [{
        "text": "Warm the tokenizer before the first request",
        "source": "Why Your LLM Responses Are Slow — Bottleneck 1: Tokenizer and Prompt Assembly",
        "why": "because tokenizer_stall_check 2 s is above 1 s"}]  # a node without a label reads by its name


def test_the_fake_cause_is_a_finding_beside_another_verdict(fake):
    evidence = samples.queue_backlog(buckets__t_conn=samples.bucket(900.0, 2000.0))
    steps = {node.name: evaluate(node, evidence, DEFAULT) for node in flowchart.FLOWCHART}
    found = [f["code"] for f in flowchart.cause_findings("queue_backlog", steps)]
    assert "tokenizer_stall" in found
    assert "tokenizer_stall" not in [f["code"] for f in flowchart.cause_findings("tokenizer_stall", steps)]


def test_an_incidents_queue_growth_is_charged_to_the_fake_verdict_when_its_node_says_yes(fake):
    steps = {"tokenizer_stall_check": {"answer": "yes"}}
    assert causes.queue_cause(steps) == "tokenizer_stall" and causes.parts(steps)["t_queue"] == "tokenizer_stall"
    # +500 ms of queue per attempt and nothing else grown: all of the increase
    assert causes.causes(_sums(t_queue=500), _sums(), steps) == [{"code": "tokenizer_stall", "share": 1.0}]
    assert causes.queue_cause({}) == "queue_backlog"  # its node silent: the backlog, as before


def test_the_fake_verdict_is_located_on_its_bucket_without_its_signature(fake):
    assert scope.measured("tokenizer_stall") == "t_conn" and scope.measured("queue_backlog") == "t_queue"
    rows = [{"dimension": "route", "value": value, "excess_ms": excess, "positive_excess_ms": excess,
             "incident_attempts": 50, "others": None} for value, excess in (("/a", 5000.0), ("/b", 0.0))]
    # /a: all the excess with half the attempts (lift 2); 100 ms per attempt is well over 5% of a 100 ms TTFT
    assert scope.scope(rows, 100.0) == [{"dimension": "route", "value": "/a", "share": 1.0}]
    assert scope.scope(rows, 100.0, "tokenizer_stall") == []  # the route is its signature, not its scope


def test_alert_rules_accept_the_fake_verdict_and_alert_on_it(fake, alpha):
    rule = AlertRule(project=alpha[0], name="x", kind=AlertRule.INCIDENT, service="svc", verdicts="tokenizer_stall")
    rule.clean()
    judge = KINDS[AlertRule.VERDICT]
    assert judge.breached(rule, "tokenizer_stall") and not judge.breached(rule, "insufficient_data")


def test_the_diagnosis_page_links_the_fake_verdicts_evidence(fake, client, alpha, clickhouse):
    user = User.objects.create_user("ann")
    alpha[0].members.add(user)
    client.force_login(user)
    result = {**diagnose(stalled()), "evidence": stalled().to_json()}
    stored = WindowDiagnosis.objects.create(project=alpha[0], service="svc", start=START,
                                            end=START + timedelta(minutes=5), verdict=result["verdict"], result=result)
    body = client.get("/diagnosis/", {"project": "alpha", "window": stored.pk}).content.decode()
    assert 'data-verdict="tokenizer_stall"' in body and "Warm the tokenizer before the first request" in body
    step = body[body.index('id="verdict-step"'):]
    assert step[:step.index("</li>")].count('href="/connections/?project=alpha&amp;service=svc') == 1
    assert verdict_pages("tokenizer_stall") == [("connections", {})] and verdict_pages("gone") == []


def test_every_verdict_the_flowchart_reaches_has_a_record_with_fixes_citing_a_seed():
    reached = {n.yes for n in flowchart.FLOWCHART} | {n.no for n in flowchart.FLOWCHART}
    produced = reached - set(flowchart.NODES) | {INSUFFICIENT}
    assert produced == set(REGISTRY)
    titles = set(SOURCES.values())
    for code in produced:
        record = REGISTRY[code]
        assert record.fixes or code == "healthy", code  # healthy: nothing to fix
        for f in record.fixes:
            assert {source.split(" — ")[0] for source in f["source"].split("; ")} <= titles, f


def test_each_record_names_the_nodes_and_thresholds_that_decide_it():
    for code, record in REGISTRY.items():
        leading = [n.name for n in flowchart.FLOWCHART if code in (n.yes, n.no)]
        assert list(record.nodes) == leading, code
        named = {*record.nodes, *(n for group in record.present for n in group)}
        assert set(record.thresholds) == {flowchart.NODES[n].threshold for n in named}, code
        assert set(record.queue_nodes) <= set(flowchart.NODES) and set(record.implies) <= set(REGISTRY)
        for name, _ in record.pages:
            assert name in TITLES and reverse(name)


def test_every_part_of_an_incidents_latency_is_charged_to_a_verdict():
    assert set(causes.PARTS) | {"t_gateway", "t_network_total"} == set(parts())
    assert parts()["t_gateway"] == "gateway_overhead" and parts()["t_network_total"] == "network_overhead"


@pytest.mark.parametrize("changes, message", [
    ({"code": "queue_backlog"}, "registered already"),
    ({"thresholds": ("queue_p95",)}, "unknown thresholds queue_p95"),
    ({"parts": ("t_post",)}, "t_post charged to post_processing already"),
    ({"fixes": (fix("Do something"),)}, "needs a text and a source"),
])
def test_register_refuses_a_record_that_would_break_another(changes, message):
    record = Verdict(**{**FAKE.__dict__, **changes})
    with pytest.raises(ValueError, match=message):
        register(record)
    assert REGISTRY.get(record.code) is not record
