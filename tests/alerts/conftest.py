import pytest


@pytest.fixture
def json_hook(alice, receiver):
    from alerts.models import Webhook

    return Webhook.objects.create(project=alice[0], name="ops", kind=Webhook.JSON, url=receiver.url())


@pytest.fixture
def slack_hook(alice, receiver):
    from alerts.models import Webhook

    return Webhook.objects.create(project=alice[0], name="slack", kind=Webhook.SLACK, url=receiver.url("/slack"))
