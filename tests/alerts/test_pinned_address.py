"""The POST goes to the address that was checked, whatever the name resolves to at send time."""
from alerts import http


def test_the_connection_goes_to_the_checked_address_with_the_urls_host_name(receiver):
    port = receiver.server.server_address[1]
    # webhook.invalid resolves nowhere: only the pinned address can have carried the request
    answer = http.post(f"http://webhook.invalid:{port}/hook?x=1", "127.0.0.1", b"{}", {"X-Test": "1"}, 5)
    assert answer.status == 200
    [seen] = receiver.requests
    assert seen["path"] == "/hook?x=1" and seen["headers"]["Host"] == f"webhook.invalid:{port}"
    assert seen["body"] == b"{}"


def test_retry_after_is_read_whatever_its_case(receiver):
    receiver.answer((429, {"retry-after": "7"}))
    answer = http.post(receiver.url(), "127.0.0.1", b"{}", {}, 5)
    assert answer.status == 429 and answer.headers.get("Retry-After") == "7"
