"""The server side of the ingest benchmark: `manage.py up` on a throw-away data dir, and /proc figures.

Server(env, code).start() makes a temporary LATENCY_OBS_DATA_DIR, runs `manage.py migrate` and
`manage.py create_api_key --project bench --scope ingest,read` (its stdout is the key), starts
`manage.py up` on a free port (gRPC on a free port too) and waits for GET /healthz to answer 200.
stop() sends SIGINT, waits for the drain and the exit, and removes the directory. Embedded mode is
forced: DATABASE_URL, CLICKHOUSE_URL, CELERY_BROKER_URL and INGEST_SPOOL_DIR are dropped from the
inherited environment (give them in `env` to override). `code` is the directory whose manage.py runs (this
checkout by default; another tree, e.g. a git ref exported by code_dir, for an A/B with this .venv).
"""
from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
sys.path.insert(0, str(ROOT))
from store.memory import resident_mib  # noqa: E402 (no Django: /proc figures only)
DROPPED_ENV = ("DATABASE_URL", "CLICKHOUSE_URL", "CELERY_BROKER_URL", "INGEST_SPOOL_DIR")
CLK_TCK = os.sysconf("SC_CLK_TCK")

class BenchError(Exception):
    """Something failed: the run's figures are not valid."""


def machine_cpu_s() -> float:
    """CPU seconds all cores spent busy since boot (/proc/stat: everything but idle and iowait)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / CLK_TCK


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_figures(pid: int) -> tuple[float, float]:
    """(peak RSS in MiB, CPU seconds user+system) of a live process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    hwm_kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return hwm_kib / 1024, _cpu_s(Path(f"/proc/{pid}/stat"))


class MemorySampler:
    """Samples a live process's /proc status every `every_s` in a thread, from start() to stop(): at the sample
    of the highest VmRSS, its split (MiB) into RssAnon (the process's own memory: Python, ClickHouse's buffers)
    and RssFile (mapped file pages: mostly chDB's library, clean pages the kernel can drop and read again).
    TRICKY: VmHWM gives only the peak; the split tells what a memory setting can shrink from what it cannot."""

    def __init__(self, pid: int, every_s: float = 0.02):
        self.pid, self.every_s = pid, every_s
        self.peak = {"rss": 0.0, "anon": 0.0, "file": 0.0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "MemorySampler":
        self._thread.start()
        return self

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return self.peak

    def _run(self) -> None:
        while True:
            now = resident_mib(self.pid)
            if now["rss"] > self.peak["rss"]:
                self.peak = now
            if self._stop.wait(self.every_s):
                return


def _cpu_s(stat: Path) -> float:
    """utime + stime of a /proc stat file (a process's or a thread's), in seconds."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # stat fields 14, 15: utime, stime


def thread_cpu_s(pid: int) -> dict[str, float]:
    """CPU seconds (user+system) of a live process's threads by name (/proc/PID/task/*/comm, digits dropped, so
    ClickHouse's pools and Python's named threads add up); threads that ended are not in it."""
    by_name: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip().rstrip("0123456789-_")
            cpu = _cpu_s(task / "stat")
        except OSError:  # the thread ended between listing and reading
            continue
        by_name[name] = by_name.get(name, 0.0) + cpu
    return by_name


class Server:
    """`manage.py up` on a fresh temp data dir: migrate, issue a key, start, wait for /healthz; stop()."""

    def __init__(self, server_env: dict[str, str], code: Path = ROOT):
        self.code = Path(code)
        self.dir = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
        self.env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        self.env.update(DJANGO_SETTINGS_MODULE="latency_obs.settings", LATENCY_OBS_DATA_DIR=str(self.dir / "data"),
                        PYTHONUNBUFFERED="1", LOG_LEVEL=self.env.get("LOG_LEVEL", "WARNING"))
        self.env.update(server_env)
        self.proc: subprocess.Popen | None = None
        self.log_path = self.dir / "server.log"
        self.key = ""
        self.port = 0

    def _manage(self, *args: str) -> str:
        done = subprocess.run([str(PYTHON), "manage.py", *args], cwd=self.code, env=self.env, capture_output=True,
                              text=True, timeout=300)
        if done.returncode:
            raise BenchError(f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return done.stdout

    def start(self) -> None:
        self._manage("migrate", "--noinput", "-v", "0")
        self.key = self._manage("create_api_key", "--project", "bench", "--scope", "ingest,read").strip()
        if not self.key or "\n" in self.key:
            raise BenchError(f"create_api_key printed {self.key!r}, expected one key")
        self.port = free_port()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [str(PYTHON), "manage.py", "up", "--host", "127.0.0.1", "--port", str(self.port), "--grpc-port", "0"],
                cwd=self.code, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError(f"server exited with {self.proc.returncode} before answering:\n{self.log_tail()}")
            try:
                if requests.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise BenchError(f"server did not answer /healthz within 120 s:\n{self.log_tail()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no server log)"

    def stop(self) -> float:
        """SIGINT, wait for the drain and exit, remove the temp dir; returns seconds taken.

        SIGKILL when it has not exited 120 s later, or when this wait is itself interrupted (Ctrl-C).
        """
        t = time.monotonic()
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)
                try:
                    self.proc.wait(timeout=120)
                except BaseException as exc:
                    self.proc.kill()
                    self.proc.wait()
                    if isinstance(exc, subprocess.TimeoutExpired):
                        raise BenchError(f"server did not stop within 120 s of SIGINT:\n{self.log_tail()}") from None
                    raise
                if self.proc.returncode != 0:
                    raise BenchError(f"server exited with {self.proc.returncode} on SIGINT:\n{self.log_tail()}")
            return time.monotonic() - t
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
