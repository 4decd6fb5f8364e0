"""`make run` for a newcomer: the scheduler's and worker's INFO lines are off by default, and a command refused while
`up` holds the store names the running product's API on the port it serves (PUBLIC_BASE_URL unset)."""
import subprocess
import sys
import time

import pytest

from tests.live import ROOT, UpProcess

pytestmark = pytest.mark.slow


def test_up_keeps_the_console_quiet_and_a_refused_command_names_its_api(tmp_path):
    up = UpProcess(tmp_path)
    up.env.pop("LOG_LEVEL", None)
    up.manage("migrate", "--noinput")
    up.manage("create_api_key", "--project", "p1", "--scope", "read")
    up.start()
    try:
        time.sleep(12)  # beat sends a task every 5 s: two or more INFO lines by now, were they on
        result = subprocess.run([sys.executable, "manage.py", "diagnose", "--project", "p1", "--service", "chat", "--start",
                                 "2026-01-05T10:00:00Z", "--end", "2026-01-05T11:00:00Z"], cwd=ROOT, env=up.env,
                                capture_output=True, text=True, timeout=120)
        links = subprocess.run([sys.executable, "manage.py", "shell", "-c",
                                "from django.conf import settings; print(settings.PUBLIC_BASE_URL)"], cwd=ROOT,
                               env=up.env, capture_output=True, text=True, timeout=120)
    finally:
        up.stop()
    log = (tmp_path / "up.log").read_text()
    assert "Sending due task" not in log and "received" not in log.lower().split("latency_obs is up")[-1], log[-2000:]
    assert result.returncode != 0
    assert f"{up.url}/api/v1/diagnosis" in result.stderr + result.stdout, result.stderr
    assert links.stdout.strip().splitlines()[-1] == up.url  # links printed by commands use the served port
