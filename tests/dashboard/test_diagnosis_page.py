"""The Diagnosis page: the flowchart drawn with the path taken, findings, fixes and evidence links."""
import re
from datetime import timedelta

import pytest

from analysis.diagnosis.service import run_diagnosis
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from analysis.work.jobs import diagnose_window
from tests import factories as f
from tests.dashboard.conftest import END, START, WINDOW

pytestmark = pytest.mark.django_db


def on_path(body: str) -> tuple[list[str], list[str]]:
    """(node names, verdict codes) of the flowchart boxes drawn as on the path."""
    boxes = re.findall(r'<g class="box (node|verdict) on-path( reached)?" data-(?:node|verdict)="([a-z_0-9]+)"', body)
    return [name for kind, _, name in boxes if kind == "node"], [name for kind, _, name in boxes if kind == "verdict"]


@pytest.fixture
def backlog(members, ingest):
    """Alpha's "slow-svc": every attempt waits 5 s in the queue, no cap known, no retries: queue_backlog."""
    _, alpha, key = members["ann"]
    ingest(key, f.request(*[f.attempt(t_queue_ms=5000.0 + i) for i in range(30)], service="slow-svc"))
    materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    return alpha


def test_the_path_taken_is_highlighted_up_to_the_verdict(ann_client, backlog):
    response = ann_client.get("/diagnosis/", {"project": "alpha", "service": "slow-svc", **WINDOW})
    assert response.status_code == 200
    body = response.content.decode()
    expected = run_diagnosis(Scope(backlog.pk, "slow-svc", START, END))
    assert expected["verdict"] == "queue_backlog"
    nodes, verdicts = on_path(body)
    assert nodes == [step["node"] for step in expected["path"]] == ["queue_p95", "idle_slots", "retry_rate_backlog"]
    assert verdicts == ["queue_backlog"]
    assert 'class="box verdict on-path reached" data-verdict="queue_backlog"' in body
    assert body.count(" reached\"") == 1
    # the measured value and the threshold at the node: t_queue p95 of 5000..5029 ms
    p95 = expected["path"][0]["value"]
    assert 5027 < p95 < 5029
    assert ">5.03 s → yes</text>" in body and ">yes when ≥ 1 s</text>" in body  # the box, with units
    assert "t_queue p95 5.03 s is above 1 s → yes</b>" in body  # the path step's sentence
    assert 'id="verdict" class="verdict queue_backlog" data-verdict="queue_backlog"' in body
    fixes = re.search(r'<ul id="recommendations">(.*?)</ul>', body, re.S).group(1)
    assert fixes.index("Verify that in_flight stays near cap") < fixes.index("because t_queue p95 5.03 s is above 1 s")
    assert "Why AI/LLM Inference Is Slow — Mechanism: bucket dominance triage" in fixes
    assert "seed 0" not in fixes and "quotas" not in fixes  # no tenant finding, no tenant fix


def test_evidence_links_lead_to_the_pages_behind_each_node(ann_client, backlog):
    body = ann_client.get("/diagnosis/", {"project": "alpha", "service": "slow-svc", **WINDOW}).content.decode()
    step = re.search(r'<li data-node="queue_p95">(.*?)</li>', body, re.S).group(1)
    assert 'href="/scheduler/?project=alpha&amp;service=slow-svc&amp;start=2026-01-05T09:55:00Z' in step
    assert "/runs/?project=alpha&amp;service=slow-svc" in step and "bucket=t_queue" in step


def test_a_stored_window_is_shown_as_it_was_diagnosed(ann_client, backlog, members):
    stored = diagnose_window(backlog.pk, "slow-svc", START, END)
    body = ann_client.get("/diagnosis/", {"project": "alpha", "window": stored.pk}).content.decode()
    assert "Stored periodic diagnosis" in body and on_path(body)[1] == ["queue_backlog"]
    # another project's stored window is not found, whatever its id
    ben = members["ben"][0]
    ann_client.force_login(ben)
    assert ann_client.get("/diagnosis/", {"project": "beta", "window": stored.pk}).status_code == 404


def test_a_service_without_requests_in_the_window_says_so(ann_client, backlog):
    response = ann_client.get("/diagnosis/", {"project": "alpha", "service": "nope", **WINDOW})
    body = response.content.decode()
    assert response.status_code == 200 and 'id="diagnosis-error"' in body and "no requests of service" in body
    assert on_path(body) == ([], [])


def test_findings_name_hostile_tenants_as_text(ann_client, traffic):
    body = ann_client.get("/diagnosis/", {"project": "alpha", **WINDOW}).content.decode()
    assert "<script>alert" not in body
    assert 'id="verdict"' in body
