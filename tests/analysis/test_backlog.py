"""The minute jobs' backlog (analysis/work/backlog.py): only services with new spans are diagnosed, projects take turns
within a run's budget, and what a run leaves is done first by the next."""
from datetime import timedelta

import pytest

from analysis.fairness import Deadline
from analysis.models import DirtyHour, PendingDiagnosis, WindowDiagnosis
from analysis.scope import Scope
from analysis.work import jobs
from tests import factories as f
from tests.helpers import Ticks

H = timedelta(hours=1)
NOW = f.BASE + timedelta(minutes=15, seconds=20)  # the recent window 10:00-10:15


def _minute(now):
    """The first two steps of the minute pipeline, without limits."""
    jobs.materialize_since_watermark(now)
    return jobs.diagnose_recent(now)


def _attempts(n=3, at=f.BASE, **kw):
    return [f.attempt(start_ns=int((at.timestamp() + 60 + i) * 1e9), **kw) for i in range(n)]


def _bucket_hours(clickhouse, project_id) -> set:
    rows = clickhouse.query_rows("SELECT DISTINCT toStartOfHour(queued_at) FROM request_buckets FINAL "
                                 "WHERE project_id = {p:UInt32}", parameters={"p": project_id})
    return {h.replace(tzinfo=f.BASE.tzinfo) for (h,) in rows}


@pytest.fixture
def two_services(alpha, ingest):
    project, key = alpha
    ingest(key, f.request(*_attempts()), f.request(*_attempts(), service="embedder"))
    return project, key


def test_only_services_with_new_spans_are_diagnosed_again(two_services, ingest):
    project, key = two_services
    first = _minute(NOW)
    assert (first["found"], first["verdicts"], first["deferred"]) == (2, {"healthy": 2}, 0)
    # a minute later nothing came: nothing is diagnosed, the minute-old diagnoses stand
    assert _minute(NOW + timedelta(minutes=1))["verdicts"] == {}
    # new spans of one service: that one only
    ingest(key, f.request(*_attempts(at=f.BASE + timedelta(minutes=5), t_first_token_ms=900), service="embedder"))
    third = _minute(NOW + timedelta(minutes=2))
    # the window 10:02-10:17 holds embedder's 3 new attempts only: TTFT 20 + 900 ms, over 600
    assert (third["found"], third["verdicts"]) == (1, {"ttft_unexplained": 1})
    latest = WindowDiagnosis.objects.filter(project=project).order_by("-end").first()
    assert (latest.service, latest.end) == ("embedder", f.BASE + timedelta(minutes=17))


def test_a_project_whose_window_is_not_materialized_yet_waits(two_services):
    project, _ = two_services
    materialize = jobs.materialize_since_watermark(NOW, Deadline(0))  # no time for any hour
    assert (materialize["found"], materialize["hours"], materialize["deferred"]) == (1, 0, 1)
    waiting = jobs.diagnose_recent(NOW)
    assert (waiting["found"], waiting["verdicts"], waiting["deferred"]) == (2, {}, 2)
    # the next minute materializes the hour first, then diagnoses what waited
    _ = jobs.materialize_since_watermark(NOW + timedelta(minutes=1))
    after = jobs.diagnose_recent(NOW + timedelta(minutes=1))
    assert (after["found"], after["verdicts"], after["deferred"]) == (0, {"healthy": 2}, 0)
    assert not DirtyHour.objects.exists() and not PendingDiagnosis.objects.exists()


def test_materialize_serves_projects_in_turns_newest_hour_first(alpha, beta, ingest, clickhouse):
    (a, a_key), (b, b_key) = alpha, beta
    ingest(a_key, *[f.request(*_attempts(at=f.BASE + k * H)) for k in range(3)])
    ingest(b_key, f.request(*_attempts()))
    # room for two hours (fake clock, one second per hour): beta's (queued by the same run, fewer hours) and
    # alpha's newest, not alpha's next
    out = jobs.materialize_since_watermark(NOW, Deadline(6, clock=Ticks()))
    assert (out["found"], out["hours"], out["projects"], out["deferred"]) == (4, 2, [a.id, b.id], 2)
    assert _bucket_hours(clickhouse, a.id) == {f.BASE + 2 * H} and _bucket_hours(clickhouse, b.id) == {f.BASE}
    # the next run does what was left (and, spans being under 2 minutes old, the overlap's hours again)
    out = jobs.materialize_since_watermark(NOW + timedelta(minutes=1))
    assert (out["found"], out["hours"], out["deferred"]) == (4, 4, 0)
    assert _bucket_hours(clickhouse, a.id) == {f.BASE, f.BASE + H, f.BASE + 2 * H}


def test_a_small_project_queued_beside_a_flood_goes_first(alpha, beta, ingest):
    """Queued by the same run, the project with fewer services queued is served first: when one unit of the flood
    takes a whole run's budget, the small project still gets its turn (not after the flood's)."""
    (a, a_key), (b, b_key) = alpha, beta
    ingest(a_key, *[f.request(*_attempts(1), service=f"svc-{i}") for i in range(5)])
    ingest(b_key, f.request(*_attempts(), service="chat"))
    jobs.materialize_since_watermark(NOW)
    out = jobs.diagnose_recent(NOW, Deadline(1.5, clock=Ticks()))  # room for one unit (fake clock: 1 s a unit)
    assert (out["found"], out["deferred"]) == (6, 5)
    assert list(WindowDiagnosis.objects.values_list("project_id", "service")) == [(b.id, "chat")]
    jobs.diagnose_recent(NOW, Deadline(1.5, clock=Ticks()))  # the next run: the flood's oldest
    assert WindowDiagnosis.objects.filter(project=a).count() == 1


def test_a_queued_service_whose_traffic_left_the_window_is_dropped(two_services):
    jobs.materialize_since_watermark(NOW)
    assert jobs.diagnose_recent(NOW, Deadline(0))["deferred"] == 2  # no time to diagnose either
    # 75 minutes on (the window 11:20-11:35), spans found at 10:15 cannot be in it: dropped, not diagnosed
    late = jobs.diagnose_recent(NOW + timedelta(minutes=80))
    assert (late["expired"], late["verdicts"], late["deferred"]) == (2, {}, 0)


def test_the_minute_job_reads_its_services_sweeps_in_batches(alpha, ingest, monkeypatch):
    """diagnose_recent and diagnose_active read the scheduler sweeps of sweeps.BATCH services at a time, and each
    service's diagnosis is the one it gets alone."""
    from analysis.diagnosis.service import run_diagnosis
    from analysis.reads import queries, sweeps
    project, key = alpha
    names = ["a", "b", "c"]
    for k, service in enumerate(names):  # attempts 0.5 s apart each queued 1-3 s on an instance of cap 2
        ingest(key, f.request(*[f.attempt(start_ns=int((f.BASE.timestamp() + 60 + i / 2) * 1e9),
                                          t_queue_ms=1000.0 * (1 + (i + k) % 3), t_stream_ms=2500.0,
                                          attributes={"llm.scheduler.cap": 2}) for i in range(12)],
                              service=service))
    read = []
    real = queries.scheduler_sweeps
    monkeypatch.setattr(queries, "scheduler_sweeps", lambda p, services, *a, **k: (
        read.append(sorted(services)), real(p, services, *a, **k))[1])
    monkeypatch.setattr(sweeps, "BATCH", 2)
    assert _minute(NOW)["verdicts"] and sorted(read) == [["a", "b"], ["c"]]
    batched = {d.service: d.result for d in WindowDiagnosis.objects.filter(project=project)}
    assert sorted(batched) == names and all(r["evidence"]["gap_fraction"]["instances"] for r in batched.values())
    read.clear()
    start, end = f.BASE, f.BASE + timedelta(minutes=15)
    assert {s: run_diagnosis(Scope(project.id, s, start, end)) for s in names} == batched
    assert sorted(read) == [[s] for s in names]  # no job around: each read alone
    read.clear()
    WindowDiagnosis.objects.all().delete()
    assert sum(jobs.diagnose_active(start, end)["verdicts"].values()) == 3
    assert sorted(read) == [["a", "b"], ["c"]]
    assert {d.service: d.result for d in WindowDiagnosis.objects.filter(project=project)} == batched


def test_an_hour_waiting_behind_a_busy_newest_hour_gets_its_turn(alpha, ingest, clickhouse):
    """A burst keeps its newest hour dirty every minute and one hour fills the budget: an older hour queued two
    minutes or more ago goes first, so it is not left until the burst ends."""
    from analysis.models import DirtyHour
    from analysis.work.backlog import dirty_hour_queues
    project, _ = alpha
    DirtyHour.objects.create(project=project, hour=f.BASE, queued_at=NOW - timedelta(minutes=3))
    DirtyHour.objects.create(project=project, hour=f.BASE + H, queued_at=NOW - timedelta(minutes=3))
    DirtyHour.objects.create(project=project, hour=f.BASE + 2 * H, queued_at=NOW)  # re-dirtied this minute
    [queue] = dirty_hour_queues(NOW)
    assert [d.hour for d in queue] == [f.BASE + H, f.BASE, f.BASE + 2 * H]
    [queue] = dirty_hour_queues(NOW - timedelta(minutes=2))  # none has waited yet: newest first
    assert [d.hour for d in queue] == [f.BASE + 2 * H, f.BASE + H, f.BASE]
