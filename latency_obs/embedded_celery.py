"""Celery worker and beat as threads of this process, for the one-process embedded mode.

chDB allows one process per data directory, so `up` cannot fork workers. With the in-memory broker
(CELERY_BROKER_URL unset) beat's messages reach this thread's worker through kombu's memory
transport: the same tasks and schedule as production, without Redis.

The worker thread reads and writes ClickHouse through the jobs' client of its own, at the background threads' priority
(analysis.work.jobs.run_as_jobs_thread), so the pages' reads on the web threads never queue behind the minute jobs'
statements and get the cores first.
"""
import threading

from celery.beat import EmbeddedService
from celery.worker import WorkController
from celery.worker import state as worker_state
from django.conf import settings

from analysis.work.jobs import run_as_jobs_thread
from latency_obs.celery import app


class EmbeddedCelery:
    def __init__(self):
        self.worker = None
        self.beat = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.worker = WorkController(
            app=app, pool_cls="solo", concurrency=1, loglevel="WARNING", hostname="embedded@localhost",
            without_heartbeat=True, without_mingle=True, without_gossip=True,
        )
        self._thread = threading.Thread(target=self._work, name="celery-worker", daemon=True)
        self._thread.start()
        self.beat = EmbeddedService(app, thread=True, schedule_filename=str(settings.DATA_DIR / "celerybeat-schedule"))
        self.beat.start()

    def _work(self) -> None:
        run_as_jobs_thread()
        self.worker.start()

    def stop(self, timeout: float = 10.0) -> None:
        if self.beat is not None:
            self.beat.stop()
        if self._thread is not None:
            worker_state.should_terminate = 0  # the worker's consumer loop checks this flag
            self._thread.join(timeout)
            worker_state.should_terminate = None
