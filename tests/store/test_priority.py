"""store.priority: a background thread runs BACKGROUND_NICE below the thread that started it, named for the OS."""
import os
import threading
from pathlib import Path

from store import priority


def _in_thread(name: str) -> tuple[int, str, int]:
    seen = {}

    def run():
        tid = threading.get_native_id()
        before = os.getpriority(os.PRIO_PROCESS, tid)
        priority.background()
        seen.update(before=before, after=os.getpriority(os.PRIO_PROCESS, tid),
                    comm=Path(f"/proc/self/task/{tid}/comm").read_text().strip())
    thread = threading.Thread(target=run, name=name)
    thread.start()
    thread.join()
    return seen["after"] - seen["before"], seen["comm"], os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_a_background_thread_runs_lower_and_the_caller_keeps_its_priority(settings):
    settings.BACKGROUND_NICE = 7
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    lowered, comm, after = _in_thread("spool-writer-traces-0")
    assert lowered == min(7, 19 - mine)
    assert comm == "spool-writer-tr"  # the OS keeps 15 bytes of the name
    assert after == mine  # only the calling thread was lowered


def test_zero_leaves_the_priority(settings):
    settings.BACKGROUND_NICE = 0
    lowered, comm, _ = _in_thread("celery-worker")
    assert (lowered, comm) == (0, "celery-worker")
