"""The embedded worker thread (up's minute jobs) reads and writes ClickHouse through a client of its own, so the pages'
reads on the web threads' client never queue behind a job's statements, and its gather()s run in its own thread
instead of on the reader threads the pages' reads use."""
import threading
from types import SimpleNamespace

from analysis.work.jobs import JOBS_ROLE
from latency_obs.embedded_celery import EmbeddedCelery
from store import client, concurrent


def test_the_worker_thread_has_a_client_of_its_own_and_gathers_in_place(settings):
    settings.CLICKHOUSE_READ_THREADS = 3  # pages' gather()s use the reader threads
    seen = []
    celery = EmbeddedCelery()
    celery.worker = SimpleNamespace(start=lambda: seen.append((client.reader_role(), concurrent._in_place())))
    thread = threading.Thread(target=celery._work)
    thread.start()
    thread.join()
    assert seen == [(JOBS_ROLE, True)]
    assert (client.reader_role(), concurrent._in_place()) == ("default", False)  # a web thread's are untouched
