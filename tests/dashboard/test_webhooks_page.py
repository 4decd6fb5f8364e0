"""The Webhooks page: a webhook is added only with a URL the validator accepts, a JSON webhook's secret is shown
once, "Send test notification" reaches a real HTTP receiver on loopback and the delivery log then says "sent";
enable/disable/delete; forms need a CSRF token; names and errors render as text; beta's member cannot touch alpha's."""
import json
import re

import pytest
from django.test import Client
from django.utils.html import escape

from alerts.models import Delivery, Webhook

HOSTILE_NAME = '<script>alert("hook")</script>'
SECRET = re.compile(r'<pre id="webhook-secret">([A-Za-z0-9_-]{43})</pre>')










@pytest.fixture
def hook(alpha, receiver):
    return Webhook.objects.create(project=alpha[0], name="ops-slack", kind=Webhook.SLACK, url=receiver.url("/slack"))


def post(c, action, project="alpha", **data):
    return c.post(f"/webhooks/?project={project}", {"action": action, **data})


def create(c, project="alpha", **data):
    return post(c, "create", project, **{"name": "ops", "kind": "json", **data})


def row(html, hook) -> str:
    return re.search(rf'<tr id="webhook-{hook.pk}">(.*?)</tr>', html, re.S).group(1)


def test_json_webhook_secret_is_shown_once(ann, receiver, alpha):
    response = create(ann, name="pager", kind="json", url=receiver.url())
    html = response.content.decode()
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    hook = Webhook.objects.get(project=alpha[0], name="pager")
    assert (hook.kind, hook.url, hook.enabled) == ("json", receiver.url(), True)
    assert SECRET.findall(html) == [hook.secret]
    assert "Copy its signing secret now: it will not be shown again." in html

    listing = ann.get("/webhooks/?project=alpha").content.decode()
    assert hook.secret not in listing and 'id="webhook-secret"' not in listing
    assert row(listing, hook).startswith(f"<td>pager</td><td>json</td><td><code>{receiver.url()}</code></td>\n"
                                         "    <td>enabled</td>")


def test_slack_webhook_has_no_secret_to_show(ann, receiver):
    html = create(ann, name="slack", kind="slack", url=receiver.url("/slack")).content.decode()
    assert 'Webhook “slack” added.' in html and 'id="webhook-secret"' not in html
    assert Webhook.objects.get(name="slack").secret == ""


@pytest.mark.parametrize("url, error", [
    ("http://10.0.0.1/hook", "http:// is accepted only for loopback receivers; use https://."),
    ("https://10.0.0.1/hook", "The webhook host '10.0.0.1' is a private address (10.0.0.1)."),
    ("https://169.254.169.254/latest", "The webhook host '169.254.169.254' is a link-local address (169.254.169.254)."),
    ("https://[::ffff:192.168.1.5]/x", "The webhook host '::ffff:192.168.1.5' is a private address (192.168.1.5)."),
    ("ftp://example.com/x", "Webhook URLs must start with https://."),
    ("https://user:pw@example.com/x", "Webhook URLs must not contain a user name or password."),
    ("", "This field is required."),
])
def test_refused_urls_show_the_validator_message_and_create_nothing(ann, url, error):
    response = create(ann, url=url)
    html = response.content.decode()
    assert response.status_code == 200
    assert f'<p class="warning form-error">URL: {escape(error)}</p>' in html
    assert not Webhook.objects.exists() and 'id="new-webhook"' not in html


def test_unknown_kind_is_refused(ann, receiver):
    html = create(ann, kind="smtp", url=receiver.url()).content.decode()
    assert "Kind: Select a valid choice. smtp is not one of the available choices." in html
    assert not Webhook.objects.exists()


def test_send_test_notification_reaches_the_receiver_and_the_log_says_sent(
        ann, hook, receiver, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = post(ann, "test", id=hook.pk)
    assert (response.status_code, response["Location"]) == (302, "/webhooks/?project=alpha")
    assert len(callbacks) == 1  # sent once the request's transaction commits

    [request] = receiver.requests
    assert request["path"] == "/slack"
    blocks = json.loads(request["body"])["blocks"]
    assert blocks[0]["text"]["text"] == "Test notification from latency_obs (alpha)"
    assert blocks[2]["elements"][0]["url"] == "http://testserver/diagnosis/?project=alpha"
    delivery = Delivery.objects.get()
    assert (delivery.webhook, delivery.event, delivery.status, delivery.attempts, delivery.last_status_code) == (
        hook, "test", "sent", 1, 200)

    html = ann.get("/webhooks/?project=alpha").content.decode()
    assert "Test notification queued for ops-slack" in html
    logged = re.search(rf'<tr id="delivery-{delivery.pk}" class="delivery sent">(.*?)</tr>', html, re.S).group(1)
    assert logged.startswith('<td>test</td><td>ops-slack</td>\n    <td class="status">sent</td><td>1</td><td>200</td>')
    assert f"<td>{delivery.sent_at:%Y-%m-%d %H:%M:%S}</td>" in logged


def test_a_failing_receiver_is_logged_with_its_error_escaped(ann, hook, receiver, eager,
                                                              django_capture_on_commit_callbacks):
    receiver.answer(400)
    with django_capture_on_commit_callbacks(execute=True):
        post(ann, "test", id=hook.pk)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("failed", 1, 400)
    Delivery.objects.create(webhook=hook, event="alert.firing", payload={}, status="failed",
                            last_error='<script>alert("err")</script>')
    html = ann.get("/webhooks/?project=alpha").content.decode()
    assert re.search(rf'<tr id="delivery-{delivery.pk}" class="delivery failed">.*?<td class="status">failed</td>'
                     r"<td>1</td><td>400</td>\s*<td class=\"error\">refused by the receiver: ok</td>", html, re.S)
    assert '<script>alert("err")' not in html and escape('<script>alert("err")</script>') in html


def test_disabled_webhook_is_shown_and_its_test_is_not_sent(ann, hook, receiver, eager,
                                                              django_capture_on_commit_callbacks):
    assert post(ann, "disable", id=hook.pk).status_code == 302
    hook.refresh_from_db()
    assert hook.enabled is False
    assert "<td>disabled</td>" in row(ann.get("/webhooks/?project=alpha").content.decode(), hook)
    with django_capture_on_commit_callbacks(execute=True):
        post(ann, "test", id=hook.pk)
    assert receiver.requests == []
    assert Delivery.objects.get().last_error == "webhook disabled"
    assert post(ann, "enable", id=hook.pk).status_code == 302
    hook.refresh_from_db()
    assert hook.enabled is True


def test_delete_removes_the_webhook_and_its_log(ann, hook):
    Delivery.objects.create(webhook=hook, event="test", payload={})
    response = post(ann, "delete", id=hook.pk)
    assert (response.status_code, response["Location"]) == (302, "/webhooks/?project=alpha")
    assert not Webhook.objects.exists() and not Delivery.objects.exists()
    html = ann.get("/webhooks/?project=alpha").content.decode()
    assert 'id="no-webhooks"' in html and 'id="no-deliveries"' in html and "Webhook ops-slack deleted." in html


def test_log_shows_the_projects_last_50_deliveries(ann, hook, beta):
    made = [Delivery.objects.create(webhook=hook, event=f"event-{i}", payload={}) for i in range(55)]
    beta_hook = Webhook.objects.create(project=beta[0], name="beta-hook", kind="slack", url="https://example.com/x")
    Delivery.objects.create(webhook=beta_hook, event="beta-event", payload={})
    html = ann.get("/webhooks/?project=alpha").content.decode()
    shown = [int(pk) for pk in re.findall(r'<tr id="delivery-(\d+)"', html)]
    assert shown == [d.pk for d in reversed(made)][:50]
    assert "beta-event" not in html and "beta-hook" not in html


def test_forms_need_a_csrf_token(members, clickhouse, hook, receiver):
    c = Client(enforce_csrf_checks=True)
    c.force_login(members["ann"][0])
    assert create(c, name="no-token", url=receiver.url()).status_code == 403
    for action in ("test", "disable", "delete"):
        assert post(c, action, id=hook.pk).status_code == 403
    hook.refresh_from_db()
    assert hook.enabled and Webhook.objects.count() == 1 and not Delivery.objects.exists()

    html = c.get("/webhooks/?project=alpha").content.decode()
    tokens = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert len(tokens) == 4  # actions and delete of the hook, create, log-out
    response = create(c, name="with-token", url=receiver.url(), csrfmiddlewaretoken=tokens[0])
    assert response.status_code == 200 and Webhook.objects.filter(name="with-token").count() == 1


def test_ben_cannot_see_or_change_alphas_webhooks(ann, ben, hook, receiver):
    Delivery.objects.create(webhook=hook, event="alpha-event", payload={})
    assert ben.get("/webhooks/?project=alpha").status_code == 404
    assert create(ben, project="alpha", name="intruder", url=receiver.url()).status_code == 404
    for project in ("alpha", "beta", ""):  # naming alpha, his own project, or none: alpha's webhook is not his
        query = f"?project={project}" if project else ""
        for action in ("test", "disable", "delete"):
            assert ben.post(f"/webhooks/{query}", {"action": action, "id": hook.pk}).status_code == 404
    hook.refresh_from_db()
    assert hook.enabled and Delivery.objects.count() == 1 and not Webhook.objects.filter(name="intruder").exists()
    assert receiver.requests == []

    html = ben.get("/webhooks/").content.decode()
    assert "project beta" in html and "ops-slack" not in html and "alpha-event" not in html
    assert receiver.url("/slack") not in html


@pytest.mark.parametrize("data", [{"action": "test", "id": "999999"}, {"action": "delete", "id": "abc"},
                                  {"action": "enable"}, {"action": "explode", "id": "1"}])
def test_unknown_or_malformed_ids_and_actions_are_404(ann, hook, data):
    assert ann.post("/webhooks/?project=alpha", data).status_code == 404


def test_anonymous_is_sent_to_login_and_changes_nothing(client, members, clickhouse, hook):
    response = client.get("/webhooks/?project=alpha")
    assert (response.status_code, response["Location"]) == (302, "/login/?next=/webhooks/%3Fproject%3Dalpha")
    assert post(client, "delete", id=hook.pk).status_code == 302 and Webhook.objects.count() == 1


def test_hostile_name_renders_as_text(ann, receiver):
    created = create(ann, name=HOSTILE_NAME, kind="slack", url=receiver.url())
    listing = ann.get("/webhooks/?project=alpha")
    for response in (created, listing):
        html = response.content.decode()
        assert HOSTILE_NAME not in html and escape(HOSTILE_NAME) in html
    assert Webhook.objects.get(name=HOSTILE_NAME)  # stored as typed
