"""Alert rules of kind `incident`: exactly one message when an incident opens and one when it resolves, the
minimum duration, the verdict filter, late-found and deleted incidents, and the Slack message; webhooks POSTed
(eager Celery) to the real loopback receiver. Incidents are stored rows, moved as detection would move them."""
import json
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings

from alerts import rules
from alerts.models import AlertRule, AlertState
from tests import factories as f

SVC = "chat"
MIN = timedelta(minutes=1)
pytestmark = pytest.mark.usefixtures("eager")


@pytest.fixture
def ev(django_capture_on_commit_callbacks):
    """ev(rule, now): one evaluation over the recent window ending at now, its on-commit sends run."""
    def go(rule, now):
        with django_capture_on_commit_callbacks(execute=True):
            return rules.evaluate_rule(rule, now - 15 * MIN, now, now)
    return go


def _rule(project, hooks, **kw):
    rule = AlertRule.objects.create(project=project, name="incidents", kind=AlertRule.INCIDENT, service=SVC,
                                    for_seconds=120, **kw)
    rule.webhooks.set(hooks)
    return rule


def _events(receiver):
    return [(b["event"], b["data"]["title"]) for b in (json.loads(r["body"]) for r in receiver.requests)]


def _close(incident, minutes):
    incident.end = incident.start + minutes * MIN
    incident.save()


@override_settings(PUBLIC_BASE_URL="https://lo.example.com/")
def test_one_message_on_open_and_one_on_resolve(alpha, json_hook, receiver, ev):
    rule = _rule(alpha[0], [json_hook])
    incident = f.incident(alpha[0], SVC, start=f.BASE, open_=True)
    key = str(incident.pk)
    # no min duration, no for_seconds hold: it fires at the first evaluation that sees it
    assert ev(rule, f.BASE + MIN) == {key: "firing"}
    for later in (MIN, 2 * MIN, 2 * MIN, 10 * MIN):
        assert ev(rule, f.BASE + later) == {key: "firing"}
    assert _events(receiver) == [("alert.firing", "[INCIDENT OPEN] incidents chat")]
    data = json.loads(receiver.requests[0]["body"])["data"]
    assert data["verdict"] == "queue_backlog"
    assert data["numbers"] == {"top cause": "queue_backlog 82%", "scope": "service-wide",
                               "peak vs baseline": "TTFT p95 33.3 s vs 250 ms ×133",
                               "started": "2026-01-05T10:00:00Z", "duration": "1 min (ongoing)"}
    assert data["url"] == f"https://lo.example.com/incidents/{incident.pk}/?project=alpha"

    _close(incident, 20)
    for later in (21, 21, 22):
        assert ev(rule, f.BASE + later * MIN) == {key: "ok"}
    assert ev(rule, f.BASE + 40 * MIN) == {}  # ended before the window and not firing: no longer measured
    assert _events(receiver) == [("alert.firing", "[INCIDENT OPEN] incidents chat"),
                                 ("alert.resolved", "[INCIDENT RESOLVED] incidents chat")]
    resolved = json.loads(receiver.requests[1]["body"])["data"]
    assert resolved["numbers"]["duration"] == "20 min"


def test_min_duration_holds_an_open_incident_and_mutes_a_short_one(alpha, json_hook, receiver, ev):
    rule = _rule(alpha[0], [json_hook], min_duration_minutes=10)
    short = f.incident(alpha[0], SVC, start=f.BASE, open_=True)
    assert ev(rule, f.BASE + 5 * MIN) == {str(short.pk): "ok"}
    _close(short, 6)  # ended after 6 minutes: never announced, its end neither
    assert ev(rule, f.BASE + 7 * MIN) == {str(short.pk): "ok"}
    long = f.incident(alpha[0], SVC, start=f.BASE + 8 * MIN, open_=True)
    assert ev(rule, f.BASE + 17 * MIN)[str(long.pk)] == "ok"  # 9 minutes so far
    assert ev(rule, f.BASE + 18 * MIN)[str(long.pk)] == "firing"  # 10 minutes: announced now
    _close(long, 12)
    assert ev(rule, f.BASE + 21 * MIN)[str(long.pk)] == "ok"
    assert [e for e, _ in _events(receiver)] == ["alert.firing", "alert.resolved"]
    assert AlertState.objects.get(rule=rule, group_key=str(short.pk)).last_notified_at is None


def test_verdict_filter(alpha, json_hook, receiver, ev):
    rule = _rule(alpha[0], [json_hook], verdicts="network_overhead, admission_gap")
    f.incident(alpha[0], SVC, start=f.BASE, open_=True)  # queue_backlog: not wanted
    wanted = f.incident(alpha[0], SVC, start=f.BASE + MIN, open_=True, verdict="admission_gap")
    f.incident(alpha[0], "other-svc", start=f.BASE, open_=True, verdict="admission_gap")  # another service
    assert ev(rule, f.BASE + 3 * MIN) == {str(wanted.pk): "firing"}
    # explained again as queue_backlog while firing: still followed, so its end is announced
    wanted.verdict = "queue_backlog"
    wanted.save()
    assert ev(rule, f.BASE + 4 * MIN) == {str(wanted.pk): "firing"}
    _close(wanted, 5)
    ev(rule, f.BASE + 7 * MIN)
    assert [e for e, _ in _events(receiver)] == ["alert.firing", "alert.resolved"]


def test_incident_found_after_it_ended_is_announced_once_each_way(alpha, json_hook, receiver, ev):
    rule = _rule(alpha[0], [json_hook])
    late = f.incident(alpha[0], SVC, start=f.BASE, minutes=12)  # re-detection on late spans stored it closed
    now = f.BASE + 14 * MIN
    assert ev(rule, now) == {str(late.pk): "firing"}
    assert ev(rule, now + MIN) == {str(late.pk): "ok"}
    assert ev(rule, now + 2 * MIN) == {str(late.pk): "ok"}
    assert [e for e, _ in _events(receiver)] == ["alert.firing", "alert.resolved"]


def test_incident_deleted_by_redetection_resolves(alpha, json_hook, receiver, ev):
    rule = _rule(alpha[0], [json_hook])
    gone = f.incident(alpha[0], SVC, start=f.BASE, open_=True)
    key = str(gone.pk)
    ev(rule, f.BASE + MIN)
    gone.delete()
    assert ev(rule, f.BASE + 2 * MIN) == {key: "ok"}
    assert ev(rule, f.BASE + 3 * MIN) == {}
    assert [t for _, t in _events(receiver)][-1] == f"[RESOLVED] incidents chat: incident {key} no longer detected"


def test_another_projects_incidents_never_fire(alpha, beta, json_hook, receiver, ev):
    rule = _rule(alpha[0], [json_hook])
    f.incident(beta[0], SVC, start=f.BASE, open_=True)
    assert ev(rule, f.BASE + MIN) == {}
    assert receiver.requests == []


def test_slack_message_says_verdict_cause_scope_peak_and_links(alpha, slack_hook, receiver, ev):
    rule = _rule(alpha[0], [slack_hook])
    incident = f.incident(alpha[0], SVC, start=f.BASE, open_=True, verdict="network_overhead",
                          scope=[{"dimension": "tenant", "value": "<!channel>", "share": 0.9}])
    ev(rule, f.BASE + MIN)
    message = json.loads(receiver.requests[0]["body"])
    assert message["blocks"][0]["text"]["text"] == "[INCIDENT OPEN] incidents chat"
    section = message["blocks"][1]
    assert section["text"]["text"] == "*Verdict:* `network_overhead`"
    fields = {fld["text"].split("\n")[0]: fld["text"].split("\n")[1] for fld in section["fields"]}
    assert fields["*top cause*"] == "network_overhead 82%"  # the factory's causes: the verdict's first
    assert fields["*scope*"] == "tenant=&lt;!channel&gt; 90%"  # no @channel from a tenant name
    assert fields["*peak vs baseline*"] == "TTFT p95 33.3 s vs 250 ms ×133"
    button = message["blocks"][2]["elements"][0]
    assert button["text"]["text"] == "Open incident" and button["url"].endswith(f"/incidents/{incident.pk}/?project=alpha")


def test_rule_validation(alpha):
    rule = AlertRule(project=alpha[0], name="x", kind=AlertRule.INCIDENT, service=SVC, group_by="tenant")
    with pytest.raises(ValidationError, match="measured per service"):
        rule.clean()
    rule.group_by, rule.verdicts = "service", "queue_backlog,slow_vibes"
    with pytest.raises(ValidationError, match="unknown verdict slow_vibes"):
        rule.clean()
    rule.verdicts = " queue_backlog , network_overhead"
    rule.clean()
    assert rule.verdict_list() == ["queue_backlog", "network_overhead"]


def test_incident_merged_by_redetection_resolves_naming_the_one_it_joined(alpha, json_hook, receiver, ev):
    from analysis.models import RetiredIncident
    rule = _rule(alpha[0], [json_hook])
    merged = f.incident(alpha[0], SVC, start=f.BASE, open_=True)
    survivor = f.incident(alpha[0], SVC, start=f.BASE - 3 * MIN, open_=True)
    key = str(merged.pk)
    ev(rule, f.BASE + MIN)
    RetiredIncident.objects.create(id=merged.pk, project=alpha[0], service=SVC, start=merged.start,
                                   verdict=merged.verdict, reason="merged", merged_into=survivor.pk,
                                   message=f"merged into incident #{survivor.pk}")
    merged.delete()
    assert ev(rule, f.BASE + 2 * MIN)[key] == "ok"
    titles = [t for _, t in _events(receiver)]
    assert f"[RESOLVED] incidents chat: incident {key} merged into incident {survivor.pk}" in titles
