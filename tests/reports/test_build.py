from datetime import datetime, timedelta, timezone

import pytest
from django.core.management import CommandError, call_command

from analysis.models import WindowDiagnosis
from reports import build, weeks
from reports.models import WeeklyReview
from tests.reports.conftest import HOSTILE_TENANT, WEEK1, WEEK2


def _service(data, name):
    [s] = [s for s in data["services"] if s["service"] == name]
    return s


def test_week_bounds_are_monday_midnight_in_the_timezone():
    assert weeks.bounds(WEEK2) == (datetime(2026, 1, 12, tzinfo=timezone.utc), datetime(2026, 1, 19, tzinfo=timezone.utc))
    # Berlin is UTC+1 in January: its Monday 00:00 is Sunday 23:00 UTC
    assert weeks.bounds(WEEK2, "Europe/Berlin")[0] == datetime(2026, 1, 11, 23, tzinfo=timezone.utc)
    assert weeks.previous("2026-W01") == "2025-W52"
    assert weeks.last_complete(datetime(2026, 1, 14, 9, tzinfo=timezone.utc)) == WEEK1
    for bad in ("2026-3", "2026-W3", "2026-W54", "W03-2026"):
        with pytest.raises(ValueError):
            weeks.parse(bad)


def test_percentiles_week_over_week_are_exact(weeks):
    data = build.build(weeks, WEEK2)
    assert [s["service"] for s in data["services"]] == ["alpha-svc", "retry-svc"]
    s = _service(data, "alpha-svc")
    assert s["requests"] == {"this": 10, "last": 10}
    ttft, total = s["percentiles"]["ttft"], s["percentiles"]["total"]
    # week 1: every TTFT 310; week 2: 610..700 -> p50 655, p95 at rank 8.55: 690 + 0.55 x 10 = 695.5
    assert (ttft["p50"]["last"], ttft["p95"]["last"]) == (310, 310)
    assert ttft["p50"]["this"] == pytest.approx(655) and ttft["p95"]["this"] == pytest.approx(695.5)
    assert ttft["p50"]["change"] == pytest.approx((655 - 310) / 310)
    # total = ttft + 900 stream + 15 post
    assert (total["p50"]["last"], total["p50"]["this"]) == (1225, pytest.approx(1570))
    assert s["dominance"]["t_queue"] == {"this": pytest.approx(10 / 1610.5), "last": pytest.approx(10 / 1225)}
    # the hostile tenant has 620..700 step 20 (p95 at rank 3.8: 680 + 0.8 x 20), acme 610..690
    assert [(t["tenant"], t["ttft_p95"]) for t in s["tenants"]] == [(HOSTILE_TENANT, pytest.approx(696)),
                                                                   ("acme", pytest.approx(686))]


def test_retry_waste_of_a_run_of_two_attempts(weeks):
    s = _service(build.build(weeks, WEEK2), "retry-svc")
    assert s["retries"] == {"runs": 1, "extra_attempts": 1, "wasted_input_tokens": 800, "wasted_output_tokens": 200}
    assert s["successes_per_hour"] == pytest.approx(1 / 168)


def test_diagnoses_are_counted_from_stored_rows_of_the_week(weeks):
    start = datetime(2026, 1, 12, 10, tzinfo=timezone.utc)
    for i, verdict in enumerate(["queue_backlog", "queue_backlog", "healthy"]):
        WindowDiagnosis.objects.create(project=weeks, service="alpha-svc", start=start + timedelta(hours=i),
                                       end=start + timedelta(hours=i, minutes=15), verdict=verdict, result={})
    WindowDiagnosis.objects.create(project=weeks, service="alpha-svc", start=start - timedelta(days=7),
                                   end=start - timedelta(days=7, minutes=-15), verdict="healthy", result={})
    assert _service(build.build(weeks, WEEK2), "alpha-svc")["diagnoses"] == {"queue_backlog": 2, "healthy": 1}
    assert _service(build.build(weeks, WEEK1), "alpha-svc")["diagnoses"] == {"healthy": 1}


def test_command_stores_and_a_second_run_replaces(weeks, capsys):
    call_command("send_weekly_review", project="alpha", week=WEEK2)
    first = WeeklyReview.objects.get(project=weeks, week=WEEK2)
    assert first.start == datetime(2026, 1, 12, tzinfo=timezone.utc)
    assert "alpha-svc: 10 requests, TTFT p95 696 ms (last week 310 ms)" in capsys.readouterr().out  # 695.5 as read
    first.data = {"stale": True}
    first.save()
    call_command("send_weekly_review", project="alpha", week=WEEK2)
    assert WeeklyReview.objects.filter(project=weeks).count() == 1
    assert WeeklyReview.objects.get(pk=first.pk).data["week"] == WEEK2


def test_command_rejects_a_bad_week(weeks):
    with pytest.raises(CommandError, match="week must look like 2026-W02, got '2026-13'"):
        call_command("send_weekly_review", project="alpha", week="2026-13")
    with pytest.raises(CommandError, match="no project named 'nope'"):
        call_command("send_weekly_review", project="nope")
    assert not WeeklyReview.objects.exists()


def test_days_of_the_week_carry_gap_fraction_and_churn(weeks):
    s = _service(build.build(weeks, WEEK2), "alpha-svc")
    # traffic only on Monday the 12th: 10 attempts queued 10 ms each = 0.1 s of backlog; no instance
    # reported llm.scheduler.cap, so gap_fraction is unknown rather than 0; 2 new connections / 10 successes;
    # all in one minute, so too few windows for a Spearman
    assert s["days"] == [{"day": "2026-01-12", "gap_fraction": None, "backlog_seconds": pytest.approx(0.1),
                          "new_connections_per_success": pytest.approx(0.2), "spearman_ttft_p95": None}]
