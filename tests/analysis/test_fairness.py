"""Projects in turns and a time budget per run (analysis/fairness.py), on a fake clock."""
import pytest
from celery.exceptions import SoftTimeLimitExceeded

from analysis.fairness import Deadline, round_robin, run_in_turns
from tests.helpers import Ticks


def test_round_robin_gives_each_queue_one_item_per_turn_in_the_order_given():
    queues = [iter(["a1", "a2", "a3"]), iter(["b1"]), iter([]), iter(["c1", "c2"])]
    assert list(round_robin(queues)) == ["a1", "b1", "c1", "a2", "c2", "a3"]


def test_round_robin_reads_a_queue_only_as_far_as_it_is_served():
    read = []

    def flood():
        for i in range(100_000):
            read.append(i)
            yield ("flood", i)

    turns = round_robin([flood(), iter([("small", 0)])])
    assert [next(turns) for _ in range(3)] == [("flood", 0), ("small", 0), ("flood", 1)]
    assert read == [0, 1]


def test_no_unit_starts_once_the_next_would_not_fit():
    # clock reads: 0 start; 1 fits (1 + mean 0 <= 4.5); 2 began, 3 ended: 1 s a unit; 4 fits (4 + 1 > 4.5): stop
    deadline = Deadline(4.5, clock=Ticks())
    done = run_in_turns([iter(range(10))], lambda item: "done", deadline, "test")
    assert (done.done, done.errors) == (1, 0)
    assert (deadline.units, deadline.last_start) == (1, 1)  # the one unit began 1 s in; the refused one is not kept
    refused = Deadline(0, clock=Ticks())
    assert not refused.fits() and refused.last_start is None  # no unit allowed: none began
    assert run_in_turns([iter(range(10))], lambda item: "done", Deadline(None), "test").done == 10


def test_a_unit_that_raises_is_counted_and_the_others_go_on(caplog):
    def work(item):
        if item == "b1":
            raise RuntimeError("query timeout")
        return item[0]

    tally = run_in_turns([iter(["a1", "a2"]), iter(["b1", "b2"])], work, Deadline(None), "diagnose")
    assert (dict(tally.outcomes), tally.errors) == ({"a": 2, "b": 1}, 1)
    assert "diagnose: unit 'b1' failed" in caplog.text and "query timeout" in caplog.text


def test_the_tasks_time_limit_still_ends_the_run():
    def work(item):
        raise SoftTimeLimitExceeded()

    with pytest.raises(SoftTimeLimitExceeded):
        run_in_turns([iter([1, 2])], work, Deadline(None), "test")
