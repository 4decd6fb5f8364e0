"""One venv per third-party tool, made once from its pinned tests/clients/requirements/<tool>.txt and cached outside
the checkout: their OpenTelemetry pins (and openai's) do not match the project's, so they cannot share its venv.

    python = client_python("litellm")   # ~/.cache/latency_obs/client-venvs/litellm-<hash>/bin/python

The directory name holds a hash of the requirements file and the Python version, so a changed pin makes a new venv
and never reuses a stale one. A lock file serialises the makers (two xdist workers, or two checkouts): the second
waits and then finds the venv complete. LATENCY_OBS_CLIENT_VENVS moves the cache. A venv without its `.complete`
mark (an install that died) is made again. Measured on a 2-core machine with an empty pip cache: litellm 181 s,
traceloop 129 s, openlit 89 s, langchain 73 s; with a filled one 122, 52, 32 and 32 s (docs/sending-traces.md,
section 6).
"""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parent / "requirements"
INSTALL_TIMEOUT_S = 1200


def cache_root() -> Path:
    default = Path.home() / ".cache" / "latency_obs" / "client-venvs"
    return Path(os.environ.get("LATENCY_OBS_CLIENT_VENVS") or default)


def venv_dir(tool: str) -> Path:
    pins = (REQUIREMENTS / f"{tool}.txt").read_bytes()
    digest = hashlib.sha256(pins + f"{sys.version_info[0]}.{sys.version_info[1]}".encode()).hexdigest()[:12]
    return cache_root() / f"{tool}-{digest}"


def client_python(tool: str) -> Path:
    """The python of `tool`'s venv, made first if it is not there yet."""
    where = venv_dir(tool)
    if not (where / ".complete").exists():
        where.parent.mkdir(parents=True, exist_ok=True)
        with open(where.parent / f"{where.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not (where / ".complete").exists():
                _make(tool, where)
    return where / "bin" / "python"


def _make(tool: str, where: Path) -> None:
    shutil.rmtree(where, ignore_errors=True)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=120)
    log = where / "install.log"
    with open(log, "w") as out:
        done = subprocess.run(
            [str(where / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
             "-r", str(REQUIREMENTS / f"{tool}.txt")], stdout=out, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"installing {tool}'s venv failed; see {log}:\n{log.read_text()[-3000:]}")
    (where / ".complete").write_text(f"made in {time.monotonic() - started:.0f} s\n")
