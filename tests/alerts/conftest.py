import pytest


@pytest.fixture
def json_hook(alpha, receiver):
    from alerts.models import Webhook

    return Webhook.objects.create(project=alpha[0], name="ops", kind=Webhook.JSON, url=receiver.url())


@pytest.fixture
def slack_hook(alpha, receiver):
    from alerts.models import Webhook

    return Webhook.objects.create(project=alpha[0], name="slack", kind=Webhook.SLACK, url=receiver.url("/slack"))
