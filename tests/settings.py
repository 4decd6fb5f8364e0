"""Test settings: each pytest(-xdist) process gets its own data dir, so its own chDB store."""
import atexit
import os
import shutil
import tempfile

_worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
_dir = tempfile.mkdtemp(prefix=f"latency_obs_test_{_worker}_", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
atexit.register(shutil.rmtree, _dir, ignore_errors=True)
os.environ["LATENCY_OBS_DATA_DIR"] = _dir
os.environ.pop("CLICKHOUSE_URL", None)  # tests always use embedded chDB
os.environ.setdefault("CLICKHOUSE_RETENTION_DAYS", "3650")  # factories use fixed past timestamps
os.environ.setdefault("INGEST_SPOOL_FSYNC", "0")
os.environ.setdefault("WEBHOOK_ALLOW_LOOPBACK", "1")  # the webhook tests receive on 127.0.0.1
os.environ.setdefault("WEBHOOK_BACKOFF_BASE_MS", "10")  # retries in tests wait milliseconds
# most tests send a few requests to prove one rule; the sample guard's own tests (and `up` in a subprocess,
# tests/live.py) use the product's default of 30
os.environ.setdefault("ANALYSIS_MIN_RUNS", "1")

from latency_obs.settings import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests

DATABASES["default"]["CONN_MAX_AGE"] = 0  # threads of live servers must not keep test DBs open
# One test database per run (pytest-django adds _gw0, _gw1 per xdist worker): two runs on one machine at once (a
# developer's and CI's, or several checkouts) would otherwise create and drop the same test_latency_obs_gw0.
_run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")[:8] or str(os.getpid())
if DATABASES["default"]["ENGINE"].endswith("postgresql"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": f"test_latency_obs_{_run}"}  # noqa: F405
# The in-process writer's segments close after 30 s instead of 1: tests hand their spans over and flush (flush(force=
# True): the ingest fixture, send_simulated, settle), so a test's traffic lands in an INSERT or two instead of one a
# second while it is delivered, and each INSERT of spans has a fixed cost whatever it holds (an empty batch 119-187 ms:
# docs/ingest-performance.md). tests/analysis/test_incident_detection.py alone: 15 -> 6 span INSERTs, 65 -> 56 CPU-s;
# make test-fast 267 -> 249 user-CPU-s (2026-11-29). Not in the environment: an `up` a test starts (tests/live.py)
# runs the product's default.
INGEST_FLUSH_INTERVAL_MS = 30_000
# No thread replaying the pages' reads behind the tests' backs (it would read while fixtures empty the tables and
# flush the database): its own tests run it (tests/dashboard/test_read_ahead.py), and an `up` a test starts runs the
# product's default.
DASHBOARD_READ_AHEAD = False
