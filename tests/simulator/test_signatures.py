"""The statistics helper itself, on hand-built attempts whose answers can be worked out by hand."""
import pytest

from tests.simulator import signatures as sg


def rec(queued, admitted, released, tenant="big", instance="gw-1", cap=2, run_id=None, attempt=1, cause=""):
    return sg.Rec(run_id=run_id or f"r{queued}-{admitted}", attempt=attempt, instance=instance, tenant=tenant, cap=cap,
                  reused=True, ok=not cause, cause=cause, input_tokens=100, output_tokens=10, queued=queued,
                  admitted=admitted, first_token=None, last_token=None, released=released,
                  end=released if released is not None else admitted or queued)


def test_gap_fraction_is_backlog_time_below_cap_over_backlog_time():
    recs = [
        rec(0, 0, 10), rec(0, 0, 20),  # both slots busy from 0
        rec(5, 10, 30, tenant="small"),  # waits 5..10 with in_flight == cap (2)
        rec(22, 25, 40),  # waits 22..25 with only one slot busy: a gap of 3 ms
        rec(23, None, None, cause="timeout"),  # never admitted: admitted_at = queued_at, so no queue time
        rec(1, 1, 50, instance="gw-2"),  # another instance, never a backlog: counts in neither sum
    ]
    sched = sg.scheduler(recs)
    assert sched.backlog_ms == pytest.approx(8)
    assert sched.gap_fraction == pytest.approx(3 / 8)
    assert sched.at_cap_fraction == pytest.approx(5 / 8)
    # during backlog: 5 ms x 2 slots of "big", then 3 ms x 1 slot of "small"
    assert sched.inflight_share("big") == pytest.approx(10 / 13)
    # queue depth x time lands in the first one-minute window
    assert sched.window_queue[0] == pytest.approx(8)


def test_gap_fraction_is_undefined_without_backlog():
    assert sg.scheduler([rec(0, 0, 10), rec(5, 5, 15)]).gap_fraction is None


def test_retry_rate_counts_extra_attempts_per_run():
    recs = [rec(0, 0, 5, run_id="a", cause="timeout"), rec(6, 6, 9, run_id="a", attempt=2), rec(0, 0, 4, run_id="b")]
    rate, causes = sg.retry_rate(recs)
    assert rate == 0.5 and causes == {"timeout": 1}


def test_spearman_ranks_with_ties():
    assert sg.spearman([1, 2, 3, 4], [10, 200, 3000, 40000]) == pytest.approx(1.0)  # monotone, not linear
    assert sg.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # x ranks 1, 2.5, 2.5, 4 against 1..4: r = 4.5 / sqrt(4.5 * 5)
    assert sg.spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(4.5 / (4.5 * 5) ** 0.5)


def test_percentile_interpolates_between_ranks():
    assert sg.pct([1, 2, 3, 4, 5], 50) == 3
    assert sg.pct(range(1, 102), 95) == pytest.approx(96)
    assert sg.pct([None, None], 95) is None
