"""`manage.py up` as a subprocess on its own data dir, for tests that kill or restart the product."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent


def task_nice(task: Path) -> int:
    """The nice value of a thread, from its /proc/PID/task/TID directory (field 19 of proc(5)'s stat)."""
    return int((task / "stat").read_text().rsplit(")", 1)[1].split()[16])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UpProcess:
    def __init__(self, data_dir: Path, nice: int | None = None, **env):
        """nice: the niceness the processes started run at, against the machine's normal 0, not the caller's own
        (negative: before all of the suite's work, the client tests' lane at 0 and the rest at +TEST_NICE included;
        applied only where the user may, as root in CI, else they keep the caller's; None: the caller's)."""
        self.data_dir, self.nice = Path(data_dir), nice
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("DATABASE_URL", "CLICKHOUSE_URL", "PYTEST_XDIST_WORKER", "ANALYSIS_MIN_RUNS")}
        self.env.update(DJANGO_SETTINGS_MODULE="latency_obs.settings", LATENCY_OBS_DATA_DIR=str(self.data_dir),
                        CLICKHOUSE_RETENTION_DAYS="3650", **env)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def manage(self, *args: str) -> str:
        """Run a management command on this data dir (not while `up` holds the store)."""
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                                capture_output=True, text=True, timeout=120)
        if result.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def start(self, timeout: float = 60) -> None:
        self.spawn(["up", "--port", str(self.port), "--grpc-port", "0"], self._healthy, timeout)

    def _healthy(self) -> bool:
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    def spawn(self, args: list[str], ready, timeout: float = 60) -> None:
        """Start `manage.py <args>` and wait until ready() is true."""
        log = open(self.data_dir / "up.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, stdout=log,
                                     stderr=subprocess.STDOUT)
        if self.nice is not None:  # from here (a preexec_fn is unsafe beside the test's threads); its threads start after
            try:
                os.setpriority(os.PRIO_PROCESS, self.proc.pid, self.nice)
            except PermissionError:  # a lower niceness needs root: run as the suite does
                pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{args[0]} exited early: {(self.data_dir / 'up.log').read_text()[-2000:]}")
            if ready():
                return
            time.sleep(0.2)
        raise TimeoutError(f"{args[0]} did not become ready")

    def kill(self, sig=signal.SIGKILL, timeout: float = 60) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout)

    def stop(self) -> None:
        self.kill(signal.SIGINT)

    def query_json(self, sql: str) -> list:
        """Rows of a ClickHouse query on this data dir, run in a separate process (after stop)."""
        code = (
            "import json; from store import client; "
            f"print(json.dumps(client.query_rows({sql!r}), default=str))"
        )
        return json.loads(self.manage("shell", "-c", code).strip().splitlines()[-1])


def logged_in(base_url: str, username: str, password: str) -> requests.Session:
    """A browser-like session of the dashboard: the login form's CSRF cookie and token, then the form posted."""
    session = requests.Session()
    session.get(f"{base_url}/login/", timeout=30)
    response = session.post(f"{base_url}/login/", timeout=30, allow_redirects=False,
                            data={"username": username, "password": password,
                                  "csrfmiddlewaretoken": session.cookies["csrftoken"]},
                            headers={"Referer": f"{base_url}/login/"})
    if response.status_code != 302:
        raise RuntimeError(f"login as {username} failed: {response.status_code}")
    return session
