"""A busy port ends start-up with one line naming the port and what to change; gRPC never shares its port."""
import errno
import socket
import subprocess
import sys

import pytest

from ingest.grpc_server import build_server
from tests.live import ROOT, UpProcess, free_port


def test_a_second_grpc_server_on_the_same_port_fails(settings):
    first, port = build_server("127.0.0.1", 0)
    first.start()
    try:
        with pytest.raises(OSError) as busy:
            build_server("127.0.0.1", port)
        assert busy.value.errno == errno.EADDRINUSE
        # what another process's gRPC server (SO_REUSEPORT on by default) would do: the kernel lets it share a
        # port only if the first listener set SO_REUSEPORT too, which ours must not
        with socket.socket() as sharer, pytest.raises(OSError) as shared:
            sharer.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sharer.bind(("127.0.0.1", port))
        assert shared.value.errno == errno.EADDRINUSE
    finally:
        first.stop(None)


@pytest.fixture
def taken():
    """A port held by a listening socket of this process (no SO_REUSEPORT: nobody may share it)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def _start(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = UpProcess(tmp_path).env
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def _one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.mark.slow
def test_up_on_a_busy_web_port_says_which_and_how_to_change_it(tmp_path, taken):
    line = _one_line(_start(tmp_path, "up", "--port", str(taken), "--grpc-port", "0"))
    assert f"127.0.0.1:{taken}" in line and "in use" in line
    assert "PORT=<port> make run" in line and "--port <port>" in line and "GRPC_PORT" not in line


@pytest.mark.slow
def test_up_on_a_busy_grpc_port_says_which_and_how_to_change_it(tmp_path, taken):
    line = _one_line(_start(tmp_path, "up", "--port", str(free_port()), "--grpc-port", str(taken)))
    assert f"127.0.0.1:{taken}" in line and "OTLP/gRPC" in line and "in use" in line
    assert "GRPC_PORT=<port> make run" in line and "--grpc-port <port>" in line


@pytest.mark.slow
def test_serve_commands_on_a_busy_port_say_which_and_name_their_flag(tmp_path, taken):
    web = _one_line(_start(tmp_path, "serve_web", "--host", "127.0.0.1", "--port", str(taken)))
    assert f"127.0.0.1:{taken}" in web and "--port <port>" in web and "make run" not in web
    grpc = _one_line(_start(tmp_path, "serve_otlp_grpc", "--host", "127.0.0.1", "--port", str(taken)))
    assert f"127.0.0.1:{taken}" in grpc and "OTLP/gRPC" in grpc and "--port <port>" in grpc
