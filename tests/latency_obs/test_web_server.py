"""The web server `up` and `serve_web` run (latency_obs.web_server), live on a free port: clients that send
half a request and then trickle or stall must not keep pages and exports from being answered."""
import signal
import socket
import threading
import time

import pytest
import requests
from django.core.handlers.wsgi import WSGIHandler
from waitress import wasyncore

from latency_obs.web_server import web_server
from tests import factories as f
from tests.live import UpProcess

pytestmark = pytest.mark.slow

TRICKLERS = 150  # past waitress's default connection_limit of 100, which stalled every other client


@pytest.fixture
def serve(transactional_db, clickhouse):
    """serve(): the server built as `up` builds it (settings as the test set them), running in a thread."""
    started = []

    def start():
        server = web_server(WSGIHandler(), "127.0.0.1", 0, threads=4)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        started.append((server, thread))
        return server

    yield start
    for server, thread in started:
        # in the loop's own thread: close every socket, which ends the loop; then stop the workers
        try:
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        except OSError:
            # TRICKY: its wake-up pipe was already closed (seen once: EBADF, a descriptor number an earlier
            # server's loop closed after reuse); closing the map from here ends the loop all the same
            wasyncore.close_all(server._map)
        thread.join(timeout=10)
        server.task_dispatcher.shutdown()


class Tricklers:
    """Connections that send headers and part of a body, then a byte now and then (every third) or nothing."""

    def __init__(self, port: int, count: int):
        self.sockets = [self._open(port, i) for i in range(count)]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._trickle, daemon=True)
        self.thread.start()

    @staticmethod
    def _open(port: int, i: int) -> socket.socket:
        path, kind = (("/v1/traces", "application/x-protobuf") if i % 2
                      else ("/login/", "application/x-www-form-urlencoded"))
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {kind}\r\nContent-Length: 100000\r\n\r\n"
                  .encode() + b"x" * 100)
        return s

    def _trickle(self):
        while not self.stop.wait(0.2):
            for s in self.sockets[::3]:
                try:
                    s.send(b"x")
                except OSError:
                    pass  # closed by the server: that is allowed

    def close(self):
        self.stop.set()
        self.thread.join()
        for s in self.sockets:
            s.close()


def wait_until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def test_pages_and_exports_are_answered_within_a_second_while_150_clients_trickle(serve, alpha):
    _, key = alpha
    server = serve()
    url = f"http://127.0.0.1:{server.effective_port}"
    tricklers = Tricklers(server.effective_port, TRICKLERS)
    try:
        # all of them accepted: they hold connections in the server, not places in the kernel's backlog
        wait_until(lambda: len(server.active_channels) >= TRICKLERS)
        time.sleep(0.5)  # a few trickles
        for _ in range(3):
            page, page_s = timed(lambda: requests.get(url + "/login/", timeout=5))
            health, health_s = timed(lambda: requests.get(url + "/healthz", timeout=5))
            body = f.request(f.attempt(), f.attempt()).SerializeToString()
            sent, sent_s = timed(lambda: requests.post(url + "/v1/traces", data=body, timeout=5, headers={
                "Authorization": f"Bearer {key}", "Content-Type": "application/x-protobuf"}))
            assert (page.status_code, health.status_code, sent.status_code) == (200, 200, 200)
            assert max(page_s, health_s, sent_s) < 1.0, (page_s, health_s, sent_s)
        assert len(server.active_channels) >= TRICKLERS  # the tricklers were still there throughout
    finally:
        tricklers.close()


def test_at_the_connection_limit_new_clients_wait(serve, settings):
    """The failure the limit guards against (waitress's default was 100): a full server answers no one."""
    settings.WEB_CONNECTION_LIMIT = 20
    server = serve()
    tricklers = Tricklers(server.effective_port, 20)
    try:
        with pytest.raises(requests.exceptions.Timeout):
            requests.get(f"http://127.0.0.1:{server.effective_port}/healthz", timeout=1)
    finally:
        tricklers.close()


def test_a_request_that_takes_longer_than_the_deadline_to_arrive_is_cut_off(serve, settings):
    """A byte every 0.2 s is never idle, so only the deadline ends it."""
    settings.WEB_REQUEST_DEADLINE_SECONDS = 2
    settings.WEB_CLEANUP_INTERVAL_SECONDS = 1
    server = serve()
    tricklers = Tricklers(server.effective_port, 3)  # socket 0 trickles, 1 and 2 stall
    try:
        trickler = tricklers.sockets[0]
        trickler.settimeout(6)
        started = time.monotonic()
        assert trickler.recv(100) == b""  # closed by the server, without an answer
        assert 2 <= time.monotonic() - started < 5
        wait_until(lambda: len(server.active_channels) == 0, timeout=3)  # the stalled ones too
    finally:
        tricklers.close()


def test_an_idle_connection_is_closed_after_the_channel_timeout(serve, settings):
    settings.WEB_CHANNEL_TIMEOUT_SECONDS = 1
    settings.WEB_CLEANUP_INTERVAL_SECONDS = 1
    server = serve()
    with socket.create_connection(("127.0.0.1", server.effective_port)) as idle:
        idle.settimeout(5)
        assert idle.recv(100) == b""


def test_a_body_declared_over_the_ingest_limit_is_refused_before_it_is_read(serve, alpha, settings):
    """waitress answers 413 from the Content-Length alone; a body of exactly the limit reaches the view."""
    settings.INGEST_MAX_BODY_BYTES = 2048
    _, key = alpha
    server = serve()
    with socket.create_connection(("127.0.0.1", server.effective_port)) as s:
        s.settimeout(5)
        s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
                  b"Content-Length: 2049\r\n\r\n")  # and no body at all
        assert s.recv(100).startswith(b"HTTP/1.1 413 ")
    at_limit = requests.post(f"http://127.0.0.1:{server.effective_port}/v1/traces", data=b"\n" * 2048, timeout=5,
                             headers={"Authorization": f"Bearer {key}", "Content-Type": "application/x-protobuf"})
    assert at_limit.headers["X-Latency-Obs-Reason"] == "malformed_protobuf"  # the view read it


def test_serve_web_answers_with_the_headers_and_stops_on_sigterm(tmp_path):
    """docker's `web` command: the same server as `up`, in a process of its own."""
    web = UpProcess(tmp_path)
    web.manage("migrate", "--noinput")
    web.spawn(["serve_web", "--host", "127.0.0.1", "--port", str(web.port), "--threads", "2"], web._healthy)
    try:
        page = requests.get(web.url + "/login/", timeout=5)
        assert page.status_code == 200 and "script-src 'self'" in page.headers["Content-Security-Policy"]
    finally:
        web.kill(signal.SIGTERM)
    assert web.proc.returncode == 0
    assert "web stopped" in (tmp_path / "up.log").read_text()
