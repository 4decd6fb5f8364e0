"""Independent reads at once: gather() runs callables on a few threads, each reading through a client of its own.

A client serialises its calls (store/client.py), and a page's or a diagnosis's reads are a dozen queries of which
most cost their fixed part (parse, plan, a small scan) more than their scan: run one after the other they add up,
run side by side they overlap on the machine's cores (embedded chDB) or on the server (production). The threads
only read ClickHouse: callers keep Django's database on their own thread.
"""
import contextvars
import itertools
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import TypeVar

from django.conf import settings

from store import client

_lock = threading.Lock()
# ((the pid it was made in, its size), the pool): a forked child makes its own
_pool: tuple[tuple[int, int], ThreadPoolExecutor] | None = None
_roles = itertools.count()
T = TypeVar("T")


def gather(*calls: Callable[[], object]) -> list:
    """The calls' results in their order, run side by side on CLICKHOUSE_READ_THREADS threads (one after the
    other when that is 1, or when called from one of those threads: a nested gather must not wait for itself).
    The first call that raised raises here, after all have ended."""
    if len(calls) < 2 or _in_place():
        return [call() for call in calls]
    # each call in a copy of the caller's context: what the caller set (analysis.rollups.aggregates.shared_reads) holds there
    futures = [_executor().submit(contextvars.copy_context().run, call) for call in calls]
    wait(futures)  # a caller that catches the error must not leave reads running behind it
    return [future.result() for future in futures]


@contextmanager
def beside(call: Callable[[], object]) -> Iterator[Future]:
    """call() run on the read threads while the caller's block runs (its own reads, gather()s included, queue behind
    it), as a Future whose result() the block takes when it needs it; the block's end waits for it whatever happens
    in the block, so no read outlives its caller. Run in place when gather() would run its calls one after another."""
    if _in_place():
        future = Future()
        try:
            future.set_result(call())
        except Exception as exc:  # noqa: BLE001 -- raised where the block takes the result, as on a thread
            future.set_exception(exc)
        yield future
        return
    future = _executor().submit(contextvars.copy_context().run, call)
    try:
        yield future
    finally:
        wait([future])


def read_once(futures: dict, lock: threading.Lock, key, read: Callable[[], T], forget: bool = False) -> T:
    """read()'s answer for `key`: the first thread to ask reads it and the others asking meanwhile wait for that read
    (its exception raises in each) instead of reading again. `futures` holds the reads by key, guarded by `lock`;
    `forget`: the key leaves it once read (a read in flight, not a memo)."""
    with lock:
        answer, first = futures.get(key), key not in futures
        if first:
            answer = futures[key] = Future()
    if first:
        try:
            answer.set_result(read())
        except BaseException as exc:
            answer.set_exception(exc)
        finally:
            if forget:
                with lock:
                    del futures[key]
    return answer.result()


def _in_place() -> bool:
    """Reads run in the caller's thread: one reader thread, or a caller that is one (it must not wait for itself)."""
    return settings.CLICKHOUSE_READ_THREADS < 2 or client.reader_role().startswith("read-")


def _executor() -> ThreadPoolExecutor:
    global _pool
    size = settings.CLICKHOUSE_READ_THREADS
    with _lock:
        if _pool is None or _pool[0] != (os.getpid(), size):
            if _pool is not None and _pool[0][0] == os.getpid():
                _pool[1].shutdown(wait=False)  # the setting changed (tests): its threads end once idle
            _pool = ((os.getpid(), size), ThreadPoolExecutor(size, thread_name_prefix="store-read",
                                                              initializer=lambda: client.bind_reader(f"read-{next(_roles)}")))
        return _pool[1]
