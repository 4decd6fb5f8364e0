"""`up`: one process serving everything; a clean Ctrl-C; a restart keeps the data."""
from collections import defaultdict
from pathlib import Path

import pytest
import requests

from tests import factories as f
from tests.live import UpProcess, task_nice

pytestmark = pytest.mark.slow


def test_up_serves_stops_cleanly_and_keeps_data_across_restart(tmp_path):
    up = UpProcess(tmp_path)
    up.manage("migrate", "--noinput")
    key = up.manage("create_api_key", "--project", "p1", "--scope", "ingest,read").strip()
    headers = {"Authorization": f"Bearer {key}"}
    up.start()
    try:
        body = f.request(f.attempt(), f.attempt(), f.attempt()).SerializeToString()
        sent = requests.post(up.url + "/v1/traces", data=body, headers={**headers, "Content-Type": "application/x-protobuf"})
        assert sent.status_code == 200
        with pytest.raises(RuntimeError) as busy:
            up.manage("migrate_clickhouse")
        assert f"held by process {up.proc.pid}" in str(busy.value)
        assert_background_threads_lowered(up.proc.pid)
    finally:
        up.stop()
    assert up.proc.returncode == 0
    assert "stopped" in (tmp_path / "up.log").read_text()

    up.start()
    try:
        status = requests.get(up.url + "/api/v1/ingest/status", headers=headers).json()
    finally:
        up.stop()
    assert (status["project"], status["spans_stored"], status["attempts_stored"]) == ("p1", 3, 3)


def test_a_second_up_on_the_same_data_dir_refuses_with_a_message(tmp_path):
    up = UpProcess(tmp_path)
    up.manage("migrate", "--noinput")
    up.start()
    try:
        second = UpProcess(tmp_path)
        with pytest.raises(RuntimeError) as busy:
            second.manage("up", "--port", str(second.port), "--grpc-port", "0")
        assert f"held by process {up.proc.pid}" in str(busy.value)
        assert_background_threads_lowered(up.proc.pid)
    finally:
        up.stop()


def assert_background_threads_lowered(pid: int) -> None:
    """The background threads run BACKGROUND_NICE (10) below the rest, so pages get the cores first."""
    main, nice = _nice_by_thread(pid)
    assert {name: nice[name] for name in ("spool-writer-tr", "celery-worker")} == \
        {"spool-writer-tr": {main + 10}, "celery-worker": {main + 10}}, (main, nice)


def _nice_by_thread(pid: int) -> tuple[int, dict[str, set[int]]]:
    """The main thread's nice value, and the other threads' by OS thread name (comm)."""
    main, out = None, defaultdict(set)
    for task in Path(f"/proc/{pid}/task").iterdir():
        nice = task_nice(task)
        if task.name == str(pid):
            main = nice
        else:
            out[(task / "comm").read_text().strip()].add(nice)
    return main, dict(out)
