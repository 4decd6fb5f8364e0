"""store/memory.py: the pages of chDB's library that start-up touched are paged out, and the engine still answers."""
import os
import subprocess
import sys
from pathlib import Path

from store import client, memory

ROOT = Path(__file__).resolve().parents[2]


def _kernel() -> tuple[int, int]:
    major, minor = os.uname().release.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def _mapped_elsewhere() -> bool:
    """Whether another process maps chDB's library (another test worker): the kernel pages out no page that
    another process maps too, so only a lone process sees its start-up pages leave."""
    for maps in Path("/proc").glob("[0-9]*/maps"):
        if maps.parent.name != str(os.getpid()):
            try:
                if memory.LIBRARY in maps.read_text():
                    return True
            except OSError:  # the process ended, or is not ours to read
                continue
    return False


def test_the_engines_start_up_pages_leave_and_it_still_answers(clickhouse):
    client.query_rows("SELECT 1")  # the engine is loaded and started in this process
    alone = not _mapped_elsewhere()
    paged = memory.page_out_library()
    if paged is None:
        assert _kernel() < (5, 4), "MADV_PAGEOUT exists since Linux 5.4: page_out_library should have worked"
        return
    before, after = paged
    assert client.query_rows("SELECT sum(number) FROM numbers(1000)") == [(499500,)]
    if alone:  # shared pages stay (see _mapped_elsewhere), and a query may read a few back: only a lone process
        assert before - after >= 50, paged  # ~200 MiB of start-up pages on an engine that ran a few queries
        assert memory.resident_mib()["file"] < before


def test_a_process_without_the_engine_has_nothing_to_page_out():
    out = subprocess.run([sys.executable, "-c", "from store import memory; print(memory.page_out_library())"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "None"


def test_the_engines_allocator_gives_freed_pages_back_after_a_second(clickhouse):
    """configure_allocator ran before this process loaded chDB: its jemalloc reports the option in force."""
    assert os.environ.get("JE_MALLOC_CONF") == memory.ALLOCATOR
    [(stats,)] = client.query_rows("SELECT * FROM system.jemalloc_stats")
    assert "opt.dirty_decay_ms: 1000 (arenas.dirty_decay_ms: 1000)" in stats  # chDB's own build says 5000
