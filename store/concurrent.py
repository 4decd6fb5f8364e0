"""Independent reads at once: gather() runs callables on a few threads, each reading through a client of its own.

A client serialises its calls (store/client.py), and a page's or a diagnosis's reads are a dozen queries of which
most cost their fixed part (parse, plan, a small scan) more than their scan: run one after the other they add up,
run side by side they overlap on the machine's cores (embedded chDB) or on the server (production). The threads
only read ClickHouse: callers keep Django's database on their own thread.
"""
import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait

from django.conf import settings

from store import client

_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None  # (the pid it was made in, the pool): a forked child makes its own
_roles = itertools.count()


def gather(*calls: Callable[[], object]) -> list:
    """The calls' results in their order, run side by side on CLICKHOUSE_READ_THREADS threads (one after the
    other when that is 1, or when called from one of those threads: a nested gather must not wait for itself).
    The first call that raised raises here, after all have ended."""
    if len(calls) < 2 or settings.CLICKHOUSE_READ_THREADS < 2 or client.reader_role().startswith("read-"):
        return [call() for call in calls]
    futures = [_executor().submit(call) for call in calls]
    wait(futures)  # a caller that catches the error must not leave reads running behind it
    return [future.result() for future in futures]


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(settings.CLICKHOUSE_READ_THREADS, thread_name_prefix="store-read",
                                                     initializer=lambda: client.bind_reader(f"read-{next(_roles)}")))
        return _pool[1]
