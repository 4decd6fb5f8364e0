"""The CPU priority of this process's background threads: the spool writers, the embedded minute jobs and the
freshness refresh run at a lower priority (a higher nice value) than the web threads, so a page asked while the
process ingests and aggregates gets the cores first and the background work takes what is left (docs/operations.md,
BACKGROUND_NICE). Linux lets any thread lower its own priority, never raise it back without CAP_SYS_NICE: only
threads that stay background are lowered, each once, itself.
"""
import ctypes
import ctypes.util
import logging
import os
import threading

from django.conf import settings

log = logging.getLogger(__name__)
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
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError as exc:
        log.warning("could not lower the priority of thread %s: %s", name, exc)
