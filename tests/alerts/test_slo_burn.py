"""slo_burn alert rules end to end: factory traffic with known bad shares through ingest and materialize, the rule
evaluated as the minute job does (alerts/rules.py) and its messages POSTed (eager Celery) to a real loopback
receiver. The SRE workbook's pairs: 1 h and 5 min both at 14.4x or more, or 6 h and 30 min both at 6x or more;
the truth of each window is worked out from what was sent."""
import json
from datetime import timedelta

import pytest

from alerts import rules
from alerts.models import AlertRule, AlertState
from analysis.windows import recent_window
from slos.models import Slo
from tests import factories as f
from tests.slos.traffic import evenly, send, truth

pytestmark = pytest.mark.usefixtures("eager")
END = f.BASE + timedelta(hours=6)  # the evaluation's window ends here; the traffic fills the 6 hours before
HOUR = timedelta(hours=1)


def one_percent_hours(hours: int) -> list:
    """`hours` hours from BASE at 1x: 100 requests an hour, 36 s apart, the 51st of each hour slow (1 %)."""
    return evenly(f.BASE, 100 * hours, timedelta(seconds=36), lambda i: "slow" if i % 100 == 50 else "fast")


def last_hour(bad: set[int]) -> list:
    """The hour before END: 125 requests 28.8 s apart, those numbered in `bad` slow."""
    return evenly(END - HOUR, 125, timedelta(seconds=28.8), lambda i: "slow" if i in bad else "fast")


# 18 of 125 slow = 14.4 % = 14.4x of a 1 % budget; 2 of them among the 10 of the last 5 minutes (i >= 115)
FAST_BURN = {7 * k for k in range(16)} | {115, 120}


@pytest.fixture
def slo(alpha):
    return Slo.objects.create(project=alpha[0], service="llm-gateway", signal="ttft", threshold_ms=1000,
                              objective=0.99, window_days=30)


@pytest.fixture
def ev(django_capture_on_commit_callbacks):
    """ev(rule, now): one evaluation over the recent window ending at now's minute, as evaluate_all runs it."""
    def go(rule, now):
        with django_capture_on_commit_callbacks(execute=True):
            return rules.evaluate_rule(rule, *recent_window(now), now)
    return go


def rule_for(target, hooks, **kw):
    """A slo_burn rule on `target`'s service, following `target` (kw slo=None: every SLO of the service)."""
    fields = {"name": "budget burn", "kind": AlertRule.SLO_BURN, "service": target.service, "slo": target, **kw}
    rule = AlertRule.objects.create(project=target.project, **fields)
    rule.webhooks.set(hooks)
    return rule


def burn(sent, window) -> float:
    counts = truth(sent, "ttft", 1000.0, END - window, END)
    return counts.bad / counts.measured / 0.01


def bodies(receiver) -> list[dict]:
    return [json.loads(r["body"]) for r in receiver.requests]


def test_fires_at_a_14_4x_burn_over_1_h_and_5_min_and_resolves_once_it_stops(alpha, slo, ingest, json_hook,
                                                                              receiver, ev):
    project, key = alpha
    sent = one_percent_hours(5) + last_hour(FAST_BURN)
    send(ingest, key, project, sent)
    assert burn(sent, HOUR) == pytest.approx(14.4) and burn(sent, timedelta(minutes=5)) == pytest.approx(20)
    assert burn(sent, 6 * HOUR) < 6  # (5 + 18) / 625: the slow pair does not hold
    rule = rule_for(slo, [json_hook])
    assert ev(rule, END) == {str(slo.pk): "firing"}  # no for-duration: the 5 minutes are the confirmation
    assert ev(rule, END) == {str(slo.pk): "firing"}
    [body] = bodies(receiver)
    data = body["data"]
    assert body["event"] == "alert.firing"
    assert data["title"] == "[FIRING] budget burn: llm-gateway: 99% TTFT < 1 s (30 days)"
    assert data["numbers"]["burn 1h"] == "×14.4" and data["numbers"]["burn 5m"] == "×20"
    assert data["numbers"]["requests (1 h)"] == 125
    assert data["context"] == "Error budget burning: 1h and 5m at ×14.4 or more (2026-01-05T16:00:00Z)"
    assert data["url"] == "http://127.0.0.1:8000/slos/?project=alpha"
    state = AlertState.objects.get(rule=rule)
    assert state.last_value["paging"] == ["fast"] and state.last_value["1h"] == pytest.approx(14.4)

    # the burning stops: 10 fast requests in the next 5 minutes; the 1 h window still burns, the 5 min one no longer
    calm = evenly(END, 10, timedelta(seconds=30), lambda i: "fast")
    send(ingest, key, project, calm)
    later = END + timedelta(minutes=5)
    assert ev(rule, later) == {str(slo.pk): "ok"}
    assert [b["event"] for b in bodies(receiver)] == ["alert.firing", "alert.resolved"]
    assert bodies(receiver)[1]["data"]["title"].startswith("[RESOLVED] budget burn: llm-gateway")


def test_just_under_14_4x_over_the_hour_stays_silent(alpha, slo, ingest, json_hook, receiver, ev):
    project, key = alpha
    sent = one_percent_hours(5) + last_hour(FAST_BURN - {0})  # 17 of 125: 13.6x
    send(ingest, key, project, sent)
    assert burn(sent, HOUR) == pytest.approx(13.6)
    rule = rule_for(slo, [json_hook])
    assert ev(rule, END) == {str(slo.pk): "ok"} and receiver.requests == []


def test_a_steady_1x_burn_stays_silent(alpha, slo, ingest, json_hook, receiver, ev):
    project, key = alpha
    sent = one_percent_hours(6)
    send(ingest, key, project, sent)
    assert burn(sent, HOUR) == pytest.approx(1) and burn(sent, 6 * HOUR) == pytest.approx(1)
    rule = rule_for(slo, [json_hook])
    assert ev(rule, END) == {str(slo.pk): "ok"}
    assert AlertState.objects.get(rule=rule).last_value["1h"] == pytest.approx(1)
    assert receiver.requests == []


def test_6x_over_6_h_and_30_min_fires_the_slow_pair(alpha, slo, ingest, slack_hook, receiver, ev):
    project, key = alpha
    # 100 an hour, 36 s apart, 6 of each 100 slow, 3 of them in each half hour
    sent = evenly(f.BASE, 600, timedelta(seconds=36), lambda i: "slow" if i % 100 in (0, 17, 34, 50, 67, 84) else "fast")
    send(ingest, key, project, sent)
    assert burn(sent, 6 * HOUR) == pytest.approx(6) and burn(sent, timedelta(minutes=30)) == pytest.approx(6)
    assert burn(sent, HOUR) < 14.4
    rule = rule_for(slo, [slack_hook])
    assert ev(rule, END) == {str(slo.pk): "firing"}
    [message] = bodies(receiver)
    assert message["blocks"][0]["text"]["text"] == "[FIRING] budget burn: llm-gateway: 99% TTFT < 1 s (30 days)"
    fields = {x["text"].split("\n")[0]: x["text"].split("\n")[1] for x in message["blocks"][1]["fields"]}
    assert fields["*burn 6h*"] == "×6" and fields["*burn 30m*"] == "×6"
    assert message["blocks"][2]["elements"][0]["text"]["text"] == "Open SLOs"
    assert "6h and 30m at ×6 or more" in message["blocks"][3]["elements"][0]["text"]


def test_a_rule_without_an_slo_follows_every_slo_of_its_service(alpha, slo, ingest, json_hook, receiver, ev):
    project, key = alpha
    send(ingest, key, project, one_percent_hours(5) + last_hour(FAST_BURN))
    loose = Slo.objects.create(project=project, service="llm-gateway", signal="ttft", threshold_ms=5000,
                               objective=0.99, window_days=28)
    other = Slo.objects.create(project=project, service="other", signal="ttft", threshold_ms=1, objective=0.99)
    rule = rule_for(loose, [json_hook], slo=None)
    assert ev(rule, END) == {str(slo.pk): "firing", str(loose.pk): "ok"}
    assert str(other.pk) not in rules.measure(rule, *recent_window(END))
    # the firing SLO deleted: its group resolves ("deleted"), the other SLO's stays
    gone = slo.pk
    slo.delete()
    assert ev(rule, END + timedelta(minutes=1)) == {str(loose.pk): "ok", str(gone): "ok"}
    assert bodies(receiver)[-1]["data"]["title"] == f"[RESOLVED] budget burn llm-gateway: SLO {gone} deleted"


def test_thin_hours_keep_their_state(alpha, slo, ingest, json_hook, receiver, ev):
    project, key = alpha
    send(ingest, key, project, last_hour(FAST_BURN))
    rule = rule_for(slo, [json_hook], min_requests=200)  # 125 measured in the last hour
    assert ev(rule, END) == {} and receiver.requests == []


def test_the_rule_must_be_per_service_and_on_its_own_slo(alpha, slo):
    from django.core.exceptions import ValidationError

    rule = AlertRule(project=alpha[0], name="x", kind=AlertRule.SLO_BURN, service="llm-gateway", slo=slo,
                     group_by="tenant")
    with pytest.raises(ValidationError, match="measured per service"):
        rule.clean()
    rule.group_by, rule.service = "service", "another-service"
    with pytest.raises(ValidationError, match="an SLO of this rule's project and service"):
        rule.clean()
