"""A bad environment value stops start-up with a message that names the variable."""
import os
import subprocess
import sys

import pytest

from tests.live import ROOT

pytestmark = pytest.mark.slow  # each test starts `manage.py check` in a subprocess

def _start(tmp_path, **env):
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "latency_obs.settings", "LATENCY_OBS_DATA_DIR": str(tmp_path), **env}
    return subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name, value", [
    ("CLICKHOUSE_URL", "mysql://x"),
    ("DATABASE_URL", "oracle://x"),
    ("INGEST_MAX_BODY_BYTES", "lots"),
    ("INGEST_SPOOL_FSYNC", "maybe"),
    ("CLICKHOUSE_RETENTION_DAYS", "0"),
    ("CELERY_BROKER_URL", "amqp://x"),
    ("WEB_CONNECTION_LIMIT", "5"),
    ("LOGIN_MAX_FAILURES_PER_USER", "0"),
    ("SECURE_SSL", "maybe"),
    ("CACHE_URL", "memcached://x"),
    ("PIPELINE_DIAGNOSE_SECONDS", "45"),  # 8 + 45 + 4 + 8 s: the four steps would not fit in the minute
    ("ROLLUP_BUDGET_SECONDS", "0"),
])
def test_bad_value_names_the_variable(tmp_path, name, value):
    result = _start(tmp_path, **{name: value})
    assert result.returncode != 0
    assert name in result.stderr and "ImproperlyConfigured" in result.stderr


def test_defaults_start_and_keep_a_generated_secret_key(tmp_path):
    assert _start(tmp_path, SECRET_KEY="").returncode == 0
    first = (tmp_path / "secret_key").read_text()
    assert _start(tmp_path, SECRET_KEY="").returncode == 0
    assert (tmp_path / "secret_key").read_text() == first and len(first) >= 40


@pytest.mark.parametrize("value, check_id", [('{"queue_p95": 2000}', "analysis.E001"),
                                             ('{"gap_fraction": 2}', "analysis.E002")])
def test_bad_analysis_thresholds_stop_start_up_with_the_check_id(tmp_path, value, check_id):
    result = _start(tmp_path, ANALYSIS_THRESHOLDS=value)
    assert result.returncode != 0
    assert check_id in result.stderr and "ANALYSIS_THRESHOLDS" in result.stderr
