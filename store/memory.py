"""The embedded engine's resident memory: how soon its allocator gives freed pages back, and the pages of chDB's
library that only its start-up needed.

chDB's jemalloc keeps freed pages for 5 s (dirty_decay_ms:5000, its build's setting): after the bench's burst of
INSERTs and merges `up` still held ~360-430 MiB of its own 5 s later. configure_allocator() makes it 1 s
(JE_MALLOC_CONF, read once when the library loads: called just before the engine is opened; a JE_MALLOC_CONF
already in the environment wins): back to ~205 MiB within a second. The bench's peak, an INSERT and a merge at
once, is live memory and moved within its noise; ingest was no slower.

chDB's start-up (ClickHouse registering its thousands of functions, formats and settings in static
initializers spread over the library) touches ~260-290 MiB of the ~550 MiB library's code and read-only data,
which then stay resident for the life of the process: `up` sat at ~375 MiB of file pages before it had
taken a span, more than half of its 600 MiB budget (issue 14; benchmarks/bench_ingest.py prints the split).
Asking the kernel to page them out once start-up is done (MADV_PAGEOUT, Linux 5.4+) frees them; the code a
running process uses is read back on first use (`up` idle ~84 MiB of file pages, ~200 at the ingest bench's
peak). The kernel keeps a page another process maps too: with two processes on chDB nothing leaves. Clean file pages
are dropped, never written anywhere, and anonymous pages of the mapping (relocated read-only data) stay
where they are on a machine without swap, so this changes no behaviour, only what stays resident.
"""
import ctypes
import logging
import os
import sys
from pathlib import Path

log = logging.getLogger(__name__)
MADV_PAGEOUT = 21
LIBRARY = "/chdb/_chdb"  # how chDB's extension module's path reads in /proc/self/maps
ALLOCATOR = "dirty_decay_ms:1000"


def configure_allocator() -> None:
    """The embedded engine's jemalloc options, unless the environment gives its own; before the engine loads."""
    os.environ.setdefault("JE_MALLOC_CONF", ALLOCATOR)


def resident_mib(pid: int | str = "self") -> dict[str, float]:
    """{"rss", "anon", "file"}: a process's resident memory now (/proc/PID/status VmRSS, RssAnon: its own, RssFile:
    mapped file pages), in MiB; 0 where /proc does not say."""
    fields = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file"}
    out = dict.fromkeys(fields.values(), 0.0)
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in fields:
                out[fields[name]] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return out


def page_out_library() -> tuple[float, float] | None:
    """Ask the kernel to page out chDB's library in this process; (RssFile before, after) in MiB, or None when
    there is nothing to do here (not Linux, chDB not loaded, or a kernel without MADV_PAGEOUT: it says EINVAL)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        ranges = [line.split()[0] for line in Path("/proc/self/maps").read_text().splitlines()
                  if LIBRARY in line.rsplit(" ", 1)[-1]]
    except OSError:
        return None
    if not ranges:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    before = resident_mib()["file"]
    for span in ranges:
        start, end = (int(x, 16) for x in span.split("-"))
        if libc.madvise(start, end - start, MADV_PAGEOUT) != 0:
            log.info("chDB's start-up pages stay resident: madvise(MADV_PAGEOUT) failed (errno %d)",
                     ctypes.get_errno())
            return None
    return before, resident_mib()["file"]
