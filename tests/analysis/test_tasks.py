"""Analysis tasks: JSON arguments, idempotent results, and one task through a real worker on Redis."""
import os
import time
from datetime import timedelta

import pytest
from celery import Celery
from celery.contrib.testing.worker import start_worker

from analysis import tasks
from analysis.models import JobWatermark, WindowDiagnosis
from analysis.work import backlog
from tests import factories as f

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _bucket_rows(clickhouse, project_id) -> int:
    return clickhouse.query_rows("SELECT count() FROM request_buckets FINAL WHERE project_id = {p:UInt32}",
                                 parameters={"p": project_id})[0][0]


@pytest.fixture
def traffic(alpha, ingest, clickhouse):
    """Three attempts of alice's service, stored but not yet materialized."""
    project, key = alpha
    ingest(key, f.request(f.attempt(), f.attempt(t_queue_ms=400), f.attempt(t_first_token_ms=900)))
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")
    JobWatermark.objects.all().delete()
    return project


def test_materialize_task_catches_up_from_its_watermark(traffic, clickhouse):
    summary = tasks.materialize_request_buckets.apply().get()
    assert _bucket_rows(clickhouse, traffic.id) == 3
    # the hours that got spans were recomputed; their rows include alice's three attempts
    assert traffic.id in summary["projects"] and summary["hours"] >= 1 and summary["rows"] >= 3
    # nothing new since the watermark: a second run has no hour to recompute and changes nothing
    tasks.materialize_request_buckets.apply().get()
    assert _bucket_rows(clickhouse, traffic.id) == 3


def test_diagnose_window_task_stores_one_result_per_window(traffic):
    tasks.materialize_request_buckets.apply().get()
    start, end = f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=1)
    args = [traffic.id, "llm-gateway", start.isoformat(), end.isoformat()]
    first = tasks.diagnose_window.apply(args=args).get()
    again = tasks.diagnose_window.apply(args=args).get()
    # one of the three waited 900 ms for its first token, so the verdict is about TTFT; it is stored either way
    assert first["id"] == again["id"] and first["verdict"] == again["verdict"] == "ttft_unexplained"
    assert WindowDiagnosis.objects.filter(project=traffic).count() == 1
    assert WindowDiagnosis.objects.get().result["evidence"]["requests"] == 3


def test_the_minute_and_hour_tasks_take_their_now_as_iso(alpha, ingest, clickhouse):
    project, key = alpha
    ingest(key, f.request(*[f.attempt(t_first_token_ms=900, start_ns=f.BASE_NS + i * 1000 * f.MS) for i in range(3)]))
    now = f.BASE + timedelta(minutes=15, seconds=5)  # the minute pipeline's `now`: the recent window 10:00-10:15
    before = backlog.store_now()
    assert tasks.materialize_request_buckets.apply(args=[now.isoformat()]).get()["rows"] == 3
    # the watermark is on the store's clock (that of ingested_at), whatever `now` says
    assert before <= JobWatermark.objects.get(name="materialize").at <= backlog.store_now()
    recent = tasks.diagnose_recent_windows.apply(args=[now.isoformat()]).get()
    # TTFT 20 + 900 ms is over 600 ms, with nothing else slow
    assert recent == {"window": [f.BASE.isoformat(), (f.BASE + timedelta(minutes=15)).isoformat()],
                      "verdicts": {"ttft_unexplained": 1}, "found": 1, "expired": 0, "deferred": 0, "errors": 0}
    hourly = tasks.rollup_last_hour.apply(args=["2026-01-05T11:02:00Z"]).get()
    assert hourly == {"window": [f.BASE.isoformat(), (f.BASE + timedelta(hours=1)).isoformat()],
                      "verdicts": {"ttft_unexplained": 1}, "deferred": 0, "errors": 0}
    assert WindowDiagnosis.objects.filter(project=project).count() == 2
    # a rerun of the rollup goes on where the last stopped: that service's hour is stored, nothing left to do
    assert tasks.rollup_last_hour.apply(args=["2026-01-05T11:07:00Z"]).get()["verdicts"] == {}


@pytest.mark.slow
def test_a_real_worker_on_redis_runs_the_materialize_task(traffic, clickhouse, transactional_db):
    worker_app = Celery("latency_obs_test", broker=REDIS_URL)
    worker_app.config_from_object("django.conf:settings", namespace="CELERY")
    worker_app.conf.broker_url = REDIS_URL
    worker_app.set_current()
    try:
        with worker_app.connection() as conn:
            conn.default_channel.client.flushdb()
        with start_worker(worker_app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            tasks.materialize_request_buckets.delay()  # through Redis, to the worker thread
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and _bucket_rows(clickhouse, traffic.id) < 3:
                time.sleep(0.2)
    finally:
        from latency_obs.celery import app

        app.set_current()
    assert _bucket_rows(clickhouse, traffic.id) == 3
