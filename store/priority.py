"""The CPU priority of this process's background threads: the spool writers, the embedded minute jobs and the
freshness refresh run at a lower priority (a higher nice value) than the web threads, so a page asked while the
process ingests and aggregates gets the cores first and the background work takes what is left (docs/operations.md,
BACKGROUND_NICE). Linux lets any thread lower its own priority, never raise it back without CAP_SYS_NICE: only
threads that stay background are lowered, each once, itself.

A statement's own work runs on ClickHouse's threads, not on the thread that sent it: in the embedded mode those are
this process's threads at its priority, so a background thread's materializing would still compete with the pages
level. Its statements therefore ask ClickHouse to run their threads at the background thread's nice value
(`os_threads_nice_value_query`, which ClickHouse applies only with CAP_SYS_NICE, as root in a container; elsewhere
a no-op and the statements keep the process's priority, as before).
"""
import ctypes
import ctypes.util
import logging
import os
import threading

from django.conf import settings

log = logging.getLogger(__name__)
_local = threading.local()  # .nice: this background thread's nice value, for its statements (statement_nice)
_PR_SET_NAME = 15
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if os.name == "posix" else None


def background() -> None:
    """Lower the calling thread's priority by BACKGROUND_NICE below the one it was started with (the process's; 0:
    leave it), and give the OS thread the Python thread's name (what `top -H` and /proc/PID/task/*/comm show, so an
    operator sees which thread is which). A failure only costs the priority or the name."""
    name = threading.current_thread().name
    if _libc is not None:
        _libc.prctl(_PR_SET_NAME, name.encode()[:15], 0, 0, 0)  # comm holds 15 bytes
    nice = settings.BACKGROUND_NICE
    if not nice or not hasattr(os, "setpriority"):
        return
    tid = threading.get_native_id()
    try:
        # TRICKY: PRIO_PROCESS with a thread id sets that one thread's nice value on Linux (threads are tasks)
        base = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, base + nice))
    except OSError as exc:
        log.warning("could not lower the priority of thread %s: %s", name, exc)
        return
    # TRICKY: ClickHouse puts each thread a statement ran on back to nice 0 when the statement ends, so only where the
    # process runs at 0 (what `up` and the production processes run at) do its statements ask for the lowered value
    if base == 0:
        _local.nice = min(19, nice)


def statement_nice() -> int | None:
    """The nice value the calling thread's statements ask ClickHouse to run at (None: the process's priority).
    A background thread of a process at nice 0 only."""
    return getattr(_local, "nice", None)


def after_statement() -> None:
    """Lower the calling thread again after a statement that asked for statement_nice(): ClickHouse ran part of it on
    this thread too and, with CAP_SYS_NICE, left it at 0."""
    nice = statement_nice()
    if nice is not None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
        except OSError:  # the same or a lower priority is always allowed; a failure only costs the priority
            pass
