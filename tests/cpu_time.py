"""`--cpu-top N`: the N tests that took the most CPU, printed after the run, beside their wall time.

The suite is CPU-bound on the 2-core machine (make test kept both cores ~90 % busy), so its wall is its CPU over
two cores, and `--durations` (wall) points at the wrong tests: the running `up` test takes ~560 s of wall but
~200 CPU-s, a LiteLLM client test ~60 s of wall but ~20. A test's CPU here is its process's (every thread: chDB's
too) while it runs, and that of the children it reaped (a `up`, a proxy, a browser): both columns are printed. A
worker's first test also carries the session fixtures it set up (the chDB store's migrations: ~2 CPU-s).
With xdist each worker measures its own tests and hands them back when it stops (workeroutput).
"""
import json
import resource
import time

import pytest

KEY = "cpu_times"


def pytest_addoption(parser):
    parser.addoption("--cpu-top", type=int, default=0, metavar="N",
                     help="print the N tests that took the most CPU (own + reaped children) with their wall time")


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


class CpuTimes:
    def __init__(self, config):
        self.config, self.rows = config, []  # (nodeid, own CPU s, children's CPU s, wall s)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        own, children = _cpu()
        began = time.monotonic()
        yield
        own_after, children_after = _cpu()
        self.rows.append((item.nodeid, own_after - own, children_after - children, time.monotonic() - began))

    def pytest_sessionfinish(self, session):
        if hasattr(self.config, "workeroutput"):  # an xdist worker: the controller prints
            self.config.workeroutput[KEY] = json.dumps(self.rows)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        self.rows += json.loads(getattr(node, "workeroutput", {}).get(KEY, "[]"))

    def pytest_terminal_summary(self, terminalreporter):
        if hasattr(self.config, "workeroutput"):
            return
        total = sum(own + children for _, own, children, _ in self.rows)
        terminalreporter.write_sep("=", f"most CPU: {len(self.rows)} tests, {total:.0f} CPU-s in all")
        terminalreporter.write_line(f"{'CPU s':>8} {'own':>7} {'reaped':>7} {'wall s':>7}  test")
        top = sorted(self.rows, key=lambda row: -(row[1] + row[2]))[:self.config.getoption("cpu_top")]
        for nodeid, own, children, wall in top:
            terminalreporter.write_line(f"{own + children:8.1f} {own:7.1f} {children:7.1f} {wall:7.1f}  {nodeid}")


def pytest_configure(config):
    if config.getoption("cpu_top") > 0:
        config.pluginmanager.register(CpuTimes(config), "cpu_times")
