import pytest

from tests.alerts.receiver import Receiver


@pytest.fixture
def receiver():
    r = Receiver()
    r.thread.start()
    yield r
    r.server.shutdown()
    r.server.server_close()


@pytest.fixture
def json_hook(alice, receiver):
    from alerts.models import Webhook

    return Webhook.objects.create(project=alice[0], name="ops", kind=Webhook.JSON, url=receiver.url())


@pytest.fixture
def slack_hook(alice, receiver):
    from alerts.models import Webhook

    return Webhook.objects.create(project=alice[0], name="slack", kind=Webhook.SLACK, url=receiver.url("/slack"))
