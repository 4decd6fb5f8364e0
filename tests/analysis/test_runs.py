"""analysis.reads.runs: finding runs and sorting them; the run page's tests (tests/dashboard/test_runs_page.py) cover the rest."""
import pytest

from analysis.reads import runs
from tests import factories as f
from tests.analysis.test_queries import DAY, buckets, send  # noqa: F401 (fixtures)


def _window(pid):
    return pid, f.BASE - DAY, f.BASE + DAY


def test_a_bucket_sort_orders_by_that_bucket_and_reports_it(send):
    pid = send(f.request(*[f.attempt(t_queue_ms=q, t_stream_ms=s) for q, s in ((10, 2000), (50, 100), (30, 900))]))
    found = runs.search(*_window(pid), sort="t_queue")
    assert [r["bucket_ms"] for r in found] == [50, 30, 10]
    # by total (t_queue + 300 + t_stream + 15): 2325, 1245, 465; no bucket is sorted by, so none is reported
    found = runs.search(*_window(pid), sort="total")
    assert [(r["total_ms"], r["bucket_ms"]) for r in found] == [(2325, None), (1245, None), (465, None)]


def test_match_finds_a_run_by_a_trace_id_prefix(send):
    a = f.attempt()
    pid = send(f.request(a, f.attempt()))
    trace_id = a.trace_id.hex()
    assert runs.match(*_window(pid), trace_id[:12]) == [("llm-gateway", trace_id)]


def test_search_refuses_an_unknown_sort():
    with pytest.raises(ValueError):
        runs.search(1, f.BASE - DAY, f.BASE, sort="span_id")


def test_the_best_runs_are_whole_runs_however_many_top_rows_one_run_holds(send):
    """A bucket sort reads every attempt: the six slowest rows are one run's (its six attempts), more than the
    first ask of twice the runs wanted holds, so the search asks again for more rows; each run comes once, at its
    largest value, in the order a sort of whole runs gives."""
    slow = [f.attempt(t_queue_ms=1000.0 + i, attributes={"llm.run.id": "r-slow", "llm.attempt": i + 1}) for i in range(6)]
    others = [f.attempt(t_queue_ms=100.0 + i, attributes={"llm.run.id": f"r-{i}"}) for i in range(5)]
    pid = send(f.request(*slow, *others))
    found = runs.search(*_window(pid), sort="t_queue", limit=3)
    assert [(r["run_id"], r["bucket_ms"], r["attempts"]) for r in found] == [
        ("r-slow", 1005.0, 6), ("r-4", 104.0, 1), ("r-3", 103.0, 1)]
    assert [r["run_id"] for r in runs.search(*_window(pid), sort="t_queue", limit=1)] == ["r-slow"]
    assert len(runs.search(*_window(pid), sort="t_queue", limit=50)) == 6  # every run, fewer than asked for
