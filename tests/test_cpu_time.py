"""tests/cpu_time.py (--cpu-top) on a suite of its own in a subprocess: the test that burns CPU in a child it reaps
comes first with that CPU as reaped, a sleeping one shows its wall and little CPU; with xdist workers too."""
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # subprocesses

SUITE = '''
import subprocess, sys, time

def test_sleeps():
    time.sleep(0.5)

def test_burns_in_a_child():
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(30_000_000))"], check=True)

def test_burns_here():
    sum(i * i for i in range(8_000_000))
'''
ROOT = Path(__file__).resolve().parent.parent


def _run(tmp_path, *args) -> list[list[str]]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.cpu_time", "-p", "no:django",
                           "-p", "no:cacheprovider", "--cpu-top", "3", *args, str(tmp_path / "test_suite.py")],
                          cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "most CPU: 3 tests" in line)
    assert lines[head + 1].split() == ["CPU", "s", "own", "reaped", "wall", "s", "test"], lines[head:]
    return [line.split() for line in lines[head + 2:head + 5]]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_the_tests_that_took_the_most_cpu_are_listed_first_with_what_their_children_took(tmp_path, workers):
    rows = _run(tmp_path, *workers)
    assert [row[-1].split("::")[1] for row in rows] == ["test_burns_in_a_child", "test_burns_here", "test_sleeps"], rows
    cpu, own, reaped, wall = map(float, rows[0][:4])
    assert reaped > own and abs(cpu - own - reaped) <= 0.11, rows
    assert float(rows[1][2]) == 0.0 and float(rows[1][1]) > 0, rows  # the one burning in its own process
    assert float(rows[2][0]) <= 0.1 and float(rows[2][3]) >= 0.5, rows  # the sleeping one: its wall, no CPU
