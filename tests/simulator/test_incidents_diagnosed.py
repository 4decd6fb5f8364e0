"""End to end: an incident sent through the real pipeline is diagnosed as its cause over its window, and the
minutes before it are healthy (calibration figures: docs/simulator.md). The causes the localized incidents' accuracy
test injects are checked so on its traffic (tests/analysis/test_incident_accuracy.py: one traffic, not two); the
others here."""
from datetime import timedelta

import pytest

from analysis.diagnosis.service import run_diagnosis
from analysis.scope import Scope
from simulator.incidents import CAUSES
from tests.analysis.test_incident_accuracy import CAUSES as ON_THE_ACCURACY_TRAFFIC
from simulator.scenarios import PRESETS
from tests.simulated import send_simulated

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fewer_gc_passes")]
# a slow decode at the healthy base's 5 rps fills every slot (a backlog, which the flowchart asks about first):
# its incident departs from a service with headroom, as the demo's batch-gateway
BASES = {"decode_throughput": PRESETS["healthy"].with_(rps=2.0)}
VERDICT = {"noisy_tenant": "queue_backlog"}
SCOPE = {"noisy_tenant": ":tenant=initech"}


def _path(result):
    return [(s["node"], s["value"], s["answer"]) for s in result["path"]]


@pytest.mark.parametrize("cause", [c for c in CAUSES if c not in ON_THE_ACCURACY_TRAFFIC])
def test_an_incident_window_is_diagnosed_as_its_cause(cause, clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base=BASES.get(cause, "healthy"), duration="40m",
                          incidents=[f"{cause}@25m+15m{SCOPE.get(cause, '')}"], seed=7)
    incident = sent.incidents[0]
    during = run_diagnosis(Scope(project.id, sent.service, incident.onset, incident.end))
    before = run_diagnosis(Scope(project.id, sent.service, incident.onset - timedelta(minutes=20), incident.onset))
    print(cause, "during", _path(during), "before", _path(before))
    assert during["verdict"] == VERDICT.get(cause, cause), _path(during)
    assert before["verdict"] == "healthy", _path(before)


def test_steady_slow_is_not_healthy_in_any_minute(clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base="steady_slow", duration="20m", seed=3, service="llm-70b")
    verdicts = [run_diagnosis(Scope(project.id, sent.service, sent.start + timedelta(minutes=m), sent.start + timedelta(minutes=m + 1)))["verdict"] for m in range(1, 19)]
    assert set(verdicts) == {PRESETS["steady_slow"].cause}, verdicts
