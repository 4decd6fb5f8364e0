"""Incidents end to end, judged the way the issue judges them: simulated traffic with injected incidents (the
simulator's own overlays) -> real ingest -> materialize -> the minute job's incidents step -> GET /api/v1/incidents.

Strict per case: every injected incident found once, onset within 120 s, end within 300 s (a queue drains after its
cause stops), verdict and causes[0] the injected cause, the injected scope on top of `scope` (and `scope` empty for a
service-wide cause); no incident at all on healthy or steady-slow services.
"""
from datetime import datetime, timedelta, timezone

import pytest

from analysis.diagnosis.service import run_diagnosis
from analysis.incidents.jobs import judge_all
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from analysis.windows import iso
from ingest.pipeline import flush_started_writers
from simulator.scenarios import PRESETS
from tests.simulated import send_simulated

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fewer_gc_passes")]
BASE = PRESETS["healthy"]  # the overlays are calibrated at the base preset's own rate
# a 3x slower decode at 5 rps fills every slot (a backlog the flowchart asks about first), as in
# tests/simulator/test_incidents_diagnosed.py: its cases run on the same fleet at 2 rps
SLOWER = PRESETS["healthy"].with_(rps=2.0)
SERVICE = "llm-gateway"
ONSET_S, END_S = 120, 300  # the goal is 2 min both ways; a slowed fleet drains its in-flight requests for longer


def incidents_via_api(client, key, sent, service=SERVICE, detect=True) -> list[dict]:
    now = datetime.now(timezone.utc)
    if detect:
        judge_all(now)
    response = client.get("/api/v1/incidents", {"service": service, "start": iso(sent.start), "end": iso(now)},
                          headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.content
    return response.json()["incidents"]


def materialize_all(project, sent) -> None:
    """What the sends spooled stored, then one materialization of the project over every send's window
    (send_simulated(materialized=False))."""
    flush_started_writers()
    sent = list(sent)
    materialize(project.id, min(s.start for s in sent) - timedelta(hours=1),
                max(s.end for s in sent) + timedelta(hours=1))


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def assert_matches(found: dict, injected, scoped: bool = False) -> None:
    summary = {k: found[k] for k in ("start", "end", "verdict", "causes", "scope")}
    assert abs((at(found["start"]) - injected.onset).total_seconds()) <= ONSET_S, (summary, injected.onset)
    assert found["end"] is not None, summary
    assert abs((at(found["end"]) - injected.end).total_seconds()) <= END_S, (summary, injected.end)
    assert found["verdict"] == injected.cause, summary
    assert found["causes"][0]["code"] == injected.cause, summary
    assert 0 < sum(c["share"] for c in found["causes"]) <= 1, summary
    if scoped:
        dimension, value = injected.scope
        assert (found["scope"][0]["dimension"], found["scope"][0]["value"]) == (dimension, value), summary
    else:
        assert found["scope"] == [], summary


CAUSES = ("queue_backlog", "admission_gap", "retry_amplification", "preprocessing", "connection_churn",
          "prefill_pressure", "decode_throughput", "post_processing", "network_overhead")
SCOPED = ("network_overhead@22m+15m:tenant=acme", "preprocessing@22m+15m:route=/v1/summarize",
          "admission_gap@22m+15m:instance={service}-2")


def test_localized_incidents_of_every_cause_and_scope_as_the_issue_judges_them(client, clickhouse, alpha):
    """One service per case in one project, one run of the incidents step, then the API per service. Judged on the
    set, as the issue does: recall >= 90 %, median onset error <= 120 s, verdict (and causes[0]) right on >= 90 % of
    the found incidents, scope right on >= 90 % (empty for the service-wide cases, the injected value first for the
    scoped ones); and each found incident ends, within END_S of the injected end.

    And on the same traffic, strictly per cause, the diagnosis (run_diagnosis) of each service-wide case: its
    incident's window diagnosed as its cause, the 20 minutes before it healthy (the check of
    tests/simulator/test_incidents_diagnosed.py, which keeps the causes not here; one traffic, not two)."""
    project, key = alpha
    cases = [(f"svc-{cause}", f"{cause}@22m+15m", SLOWER if cause == "decode_throughput" else BASE, False)
             for cause in CAUSES]
    cases += [(f"scoped-{k}", spec.format(service=f"scoped-{k}"), BASE, True) for k, spec in enumerate(SCOPED)]
    sent = {service: send_simulated(project, key, base=base, duration="45m", incidents=[spec], seed=7, service=service,
                                    materialized=False) for service, spec, base, _ in cases}
    materialize_all(project, sent.values())
    judge_all(datetime.now(timezone.utc))
    found, onset_errors, wrong, unscoped, late = 0, [], [], [], []
    for service, spec, _, scoped in cases:
        injected = sent[service].incidents[0]
        listed = incidents_via_api(client, key, sent[service], service, detect=False)
        match = [i for i in listed if abs((at(i["start"]) - injected.onset).total_seconds()) <= 600]
        if not match:
            continue
        incident = match[0]
        found += 1
        onset_errors.append(abs((at(incident["start"]) - injected.onset).total_seconds()))
        if incident["verdict"] != injected.cause or incident["causes"][0]["code"] != injected.cause:
            wrong.append((spec, incident["verdict"], incident["causes"]))
        top = (incident["scope"][0]["dimension"], incident["scope"][0]["value"]) if incident["scope"] else None
        if top != (injected.scope if scoped else None):
            unscoped.append((spec, incident["scope"]))
        if incident["end"] is None or abs((at(incident["end"]) - injected.end).total_seconds()) > END_S:
            late.append((spec, incident["end"], injected.end.isoformat()))
    report = {"found": found, "of": len(cases), "onset_errors": sorted(onset_errors), "wrong": wrong,
              "unscoped": unscoped, "late": late}
    assert found >= 0.9 * len(cases), report
    assert sorted(onset_errors)[len(onset_errors) // 2] <= ONSET_S, report
    assert len(wrong) <= 0.1 * found, report
    assert len(unscoped) <= 0.1 * found, report
    assert not late, report
    diagnosed = {}
    for service, spec, _, scoped in cases:
        if not scoped:
            injected = sent[service].incidents[0]
            during = run_diagnosis(Scope(project.id, service, injected.onset, injected.end))
            before = run_diagnosis(Scope(project.id, service, injected.onset - timedelta(minutes=20), injected.onset))
            diagnosed[injected.cause] = (during["verdict"], before["verdict"], [
                (s["node"], s["value"], s["answer"]) for s in during["path"]])
    assert {cause: verdicts[:2] for cause, verdicts in diagnosed.items()} == {
        cause: (cause, "healthy") for cause in CAUSES}, diagnosed


def test_two_incidents_in_one_window_are_two(client, clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base=BASE, duration="60m",
                          incidents=["network_overhead@20m+12m", "post_processing@42m+12m"], seed=9)
    found = incidents_via_api(client, key, sent)
    assert len(found) == 2, [(i["start"], i["end"], i["verdict"]) for i in found]
    for incident, injected in zip(found, sent.incidents):
        assert_matches(incident, injected)


def test_two_causes_at_once_are_both_named_larger_first(client, clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base=BASE, duration="45m",
                          incidents=["network_overhead@22m+15m", "post_processing@22m+15m"], seed=10)
    found = incidents_via_api(client, key, sent)
    assert len(found) == 1, [(i["start"], i["end"], i["verdict"]) for i in found]
    codes = [c["code"] for c in found[0]["causes"]]
    assert set(codes[:2]) == {"network_overhead", "post_processing"}, found[0]["causes"]
    shares = [c["share"] for c in found[0]["causes"]]
    assert shares == sorted(shares, reverse=True)
    assert found[0]["verdict"] == codes[0]


@pytest.mark.parametrize("base,seed", [("healthy", 11), ("healthy", 12), ("steady_slow", 11), ("steady_slow", 12)])
def test_steady_services_have_no_incident(base, seed, client, clickhouse, alpha):
    project, key = alpha
    scenario = PRESETS[base].at_rps(min(2.0, PRESETS[base].rps))
    sent = send_simulated(project, key, base=scenario, duration="50m", seed=seed)
    found = incidents_via_api(client, key, sent)
    assert found == [], [(i["start"], i["end"], i["verdict"], i["path"][:1]) for i in found]


def test_an_ongoing_incident_has_no_end(client, clickhouse, alpha):
    project, key = alpha
    sent = send_simulated(project, key, base=BASE, duration="35m", incidents=["network_overhead@24m+11m"], seed=13)
    found = incidents_via_api(client, key, sent)
    assert len(found) == 1 and found[0]["end"] is None, found
    assert abs((at(found[0]["start"]) - sent.incidents[0].onset).total_seconds()) <= ONSET_S
    assert found[0]["verdict"] == "network_overhead"
