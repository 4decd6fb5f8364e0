"""The Alert rules page: linked from the nav; a rule is created only when the model's rules accept it (errors shown,
nothing stored); edit, mute and unmute, delete; "Send test" reaches the rule's webhook (a real loopback receiver);
names render as text; ben cannot see or touch alpha's rules."""
import json

import pytest
from django.utils.html import escape

from alerts.models import AlertRule, Webhook

HOSTILE = '<script>alert("rule")</script>'


@pytest.fixture
def hook(alpha, receiver):
    return Webhook.objects.create(project=alpha[0], name="ops", kind=Webhook.JSON, url=receiver.url("/hook"))


@pytest.fixture
def rule(alpha, hook):
    made = AlertRule.objects.create(project=alpha[0], name="slow chat", kind=AlertRule.PERCENTILE,
                                    service="chat", bucket="ttft", percentile=95, threshold=800)
    made.webhooks.add(hook)
    return made


def post(c, project="alpha", **data):
    return c.post(f"/alerts/?project={project}", data)


def test_the_nav_links_to_the_page_which_lists_the_rules(ann, rule):
    html = ann.get("/alerts/", {"project": "alpha"}).content.decode()
    assert '/alerts/?project=alpha"' in ann.get("/webhooks/", {"project": "alpha"}).content.decode()
    assert f'id="rule-{rule.pk}"' in html and "ttft p95 &gt; 800 ms" in html and "ops" in html


def test_a_rule_is_created_with_its_webhook_or_refused_with_the_models_reason(ann, alpha, hook):
    response = post(ann, name="tails", kind="tenant_tail", service="chat", group_by="tenant", bucket="t_queue",
                    percentile=95, threshold=2000, min_requests=20, for_seconds=60, renotify_seconds=0,
                    min_duration_minutes=0, webhooks=[hook.pk], enabled="on")
    assert response.status_code == 200 and not AlertRule.objects.exists()
    assert "a tenant&#x27;s tail is its ttft or total" in response.content.decode()
    response = post(ann, name="tails", kind="tenant_tail", service="chat", group_by="tenant", bucket="ttft",
                    percentile=95, threshold=2000, min_requests=20, for_seconds=60, renotify_seconds=0,
                    min_duration_minutes=0, webhooks=[hook.pk], enabled="on")
    assert (response.status_code, response["Location"]) == (302, "/alerts/?project=alpha")
    made = AlertRule.objects.get()
    assert (made.project, made.kind, made.threshold, list(made.webhooks.all())) == (alpha[0], "tenant_tail", 2000,
                                                                                    [hook])


def test_edit_mute_unmute_and_delete(ann, rule):
    form = ann.get("/alerts/", {"project": "alpha", "edit": rule.pk}).content.decode()
    assert f'name="edit" value="{rule.pk}"' in form and 'value="slow chat"' in form
    post(ann, edit=rule.pk, name="slow chat", kind="percentile", service="chat", group_by="service", bucket="ttft",
         percentile=99, threshold=1500, min_requests=20, for_seconds=120, renotify_seconds=0, min_duration_minutes=0,
         enabled="on")
    rule.refresh_from_db()
    assert (rule.percentile, rule.threshold, AlertRule.objects.count()) == (99, 1500, 1)
    post(ann, action="mute", id=rule.pk)
    rule.refresh_from_db()
    assert not rule.enabled and "<b>muted</b>" in ann.get("/alerts/", {"project": "alpha"}).content.decode()
    post(ann, action="unmute", id=rule.pk)
    rule.refresh_from_db()
    assert rule.enabled
    post(ann, action="delete", id=rule.pk)
    assert not AlertRule.objects.exists()


def test_send_test_reaches_the_rules_webhook(ann, rule, receiver, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post(ann, action="test", id=rule.pk)
    assert response.status_code == 302
    [request] = receiver.requests
    assert request["path"] == "/hook" and json.loads(request["body"])["event"] == "test"


def test_names_are_text_and_ben_cannot_touch_alphas_rules(ann, ben, rule):
    rule.name = HOSTILE
    rule.save()
    assert escape(HOSTILE) in ann.get("/alerts/", {"project": "alpha"}).content.decode()
    assert ben.get("/alerts/", {"project": "alpha"}).status_code == 404
    assert post(ben, project="beta", action="delete", id=rule.pk).status_code == 404
    assert ben.get("/alerts/", {"project": "beta", "edit": rule.pk}).status_code == 404
    assert AlertRule.objects.filter(pk=rule.pk).exists()
