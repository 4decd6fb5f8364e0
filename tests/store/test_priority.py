"""store.priority: a background thread runs BACKGROUND_NICE below the thread that started it, named for the OS."""
import os
import threading
from pathlib import Path

import pytest

from store import priority
from tests.live import task_nice


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


def _may_renice() -> bool:
    """CAP_SYS_NICE (bit 23 of the effective capabilities: root in a container), which ClickHouse needs to apply
    os_threads_nice_value_query; without it the setting is a no-op."""
    caps = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("CapEff:"))
    return bool(int(caps.split()[1], 16) >> 23 & 1)


def _statement_threads_nice(background: bool) -> tuple[set[int], int]:
    """Run a statement of a few tenths of a second from a new thread (lowered first when `background`, from nice 0) and
    sample the nice values of ClickHouse's threads running it; also the calling thread's nice value after it."""
    from store import client
    seen, done, after = set(), threading.Event(), {}

    def run():
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, 0)  # as `up` runs: a process at nice 0
        if background:
            priority.background()
        try:
            client.query_rows("SELECT count() FROM numbers_mt(60000000) WHERE sipHash64(number) % 7 = 1")
        finally:
            after["nice"] = os.getpriority(os.PRIO_PROCESS, tid)
            done.set()
    thread = threading.Thread(target=run, name="celery-worker")
    thread.start()
    while not done.wait(0.01):
        for task in Path("/proc/self/task").iterdir():
            try:
                if (task / "comm").read_text().strip().startswith("QueryPipeline"):
                    seen.add(task_nice(task))
            except (OSError, IndexError):  # the thread ended between the two reads
                pass
    thread.join()
    return seen, after["nice"]


@pytest.mark.skipif(not _may_renice(), reason="ClickHouse applies a statement's nice value only with CAP_SYS_NICE")
def test_a_background_threads_statements_run_at_its_priority_on_clickhouses_threads(settings):
    # the minute jobs' materializing ran on ClickHouse's threads at the process's priority, level with the pages'
    # reads (docs/benchmarks.md, bench-live): a background thread's statements now ask for its own nice value
    settings.BACKGROUND_NICE = 7
    _statement_threads_nice(background=False)  # ClickHouse's pool grown by a web thread first, its threads at 0
    lowered, caller_after = _statement_threads_nice(background=True)
    level, _ = _statement_threads_nice(background=False)
    assert lowered == {7}, lowered
    assert caller_after == 7  # ClickHouse put the caller back to 0 after the statement: lowered again
    assert level and 7 not in level, level  # a web thread's statements after it: not left at the background's
