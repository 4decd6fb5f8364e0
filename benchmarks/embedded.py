"""A throw-away embedded store for the in-process benchmarks: a temp data dir, Django set up, both migrations run.

    with embedded_store("bench-metrics-", INGEST_PROJECT_SPANS_PER_SECOND="0"):
        ...  # import and use the project's modules here

Embedded mode is forced: CLICKHOUSE_URL, DATABASE_URL, CELERY_BROKER_URL and INGEST_SPOOL_DIR are dropped.
"""
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DROPPED_ENV = ("CLICKHOUSE_URL", "DATABASE_URL", "CELERY_BROKER_URL", "INGEST_SPOOL_DIR")


@contextmanager
def embedded_store(prefix: str, **env: str):
    """Yields the data dir (removed afterwards), with `env` set before Django reads its settings."""
    data_dir = tempfile.mkdtemp(prefix=prefix)
    os.environ.update(LATENCY_OBS_DATA_DIR=data_dir, DJANGO_SETTINGS_MODULE="latency_obs.settings",
                      LOG_LEVEL="WARNING", **env)
    for var in DROPPED_ENV:
        os.environ.pop(var, None)
    sys.path.insert(0, str(ROOT))
    try:
        import django

        django.setup()
        from django.core.management import call_command

        from store.migrate import migrate

        call_command("migrate", verbosity=0)
        migrate()
        yield Path(data_dir)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
