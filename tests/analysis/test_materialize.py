"""analysis.rollups.materialize: request_buckets rows from spans, idempotent per window, dirty hours."""
from datetime import datetime, timedelta, timezone

import pytest

from analysis.rollups.materialize import dirty_hours, materialize, materialize_dirty
from analysis.sql_files import sql
from store import client
from tests import factories as f

DAY = timedelta(days=1)
H = timedelta(hours=1)


@pytest.fixture
def buckets(clickhouse):
    """The clickhouse fixture with request_buckets emptied too."""
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")
    return clickhouse


def _rows(clickhouse, project_id):
    return clickhouse.query("SELECT * FROM request_buckets FINAL WHERE project_id = {p:UInt32} ORDER BY start_at",
                            parameters={"p": project_id})


def _at(minutes: float) -> int:
    return f.BASE_NS + int(minutes * 60_000) * f.MS


def test_rows_carry_buckets_and_stage_sums_from_the_attempt_and_its_run_root(alpha, ingest, buckets):
    project, key = alpha
    root = f.span(name="chat.handle", duration_ms=2000)
    a = f.attempt(t_queue_ms=20, t_first_token_ms=300, reused=False, parent=root, trace_id=root.trace_id,
                  start_ns=root.start_time_unix_nano + 100 * f.MS, attributes={"llm.run.id": "run-1"})
    stages = [f.stage(a, "connect", 20, 30), f.stage(a, "tokenize", 50, 5), f.stage(a, "prompt_build", 55, 7),
              f.stage(a, "policy", 62, 3), f.stage(a, "network", 70, 12), f.stage(root, "retrieval", 0, 60),
              f.stage(a, "tool", 80, 4), f.stage(root, "tool", 1500, 6), f.stage(a, "post", 1300, 9)]
    alone = f.attempt(start_ns=root.start_time_unix_nano + 5000 * f.MS)  # no stage spans: every sum unknown
    ingest(key, f.request(root, a, *stages, alone))
    assert materialize(project.id, f.BASE - DAY, f.BASE + DAY) == 2
    row, other = _rows(buckets, project.id)
    assert [other[k] for k in ("prep_ms", "network_ms", "retrieval_ms", "tool_ms", "post_stage_ms")] == [None] * 5
    # t_conn 30 (connect span); 300 - 30 -> 270; prep 5 + 7 + 3 -> 15; retrieval from the root's child; tool 4 + 6
    # from both
    assert (row["t_queue_ms"], row["t_conn_ms"], row["t_first_token_ms"], row["t_retry_ms"]) == (20, 30, 270, 0)
    assert (row["prep_ms"], row["network_ms"], row["retrieval_ms"], row["tool_ms"], row["post_stage_ms"]) == (
        15, 12, 60, 10, 9)
    assert (row["is_final_attempt"], row["run_attempt_count"], row["ttft_ms"]) == (True, 1, 320)


def test_rematerializing_replaces_rows_instead_of_doubling_them(alpha, ingest, buckets):
    project, key = alpha
    ingest(key, f.request(f.attempt(), f.attempt(t_queue_ms=400)))
    assert materialize(project.id, f.BASE - DAY, f.BASE + DAY) == 2
    # a connect stage arrives later: the same attempt's row is replaced, not added
    parent = f.attempt(reused=False)
    ingest(key, f.request(parent))
    ingest(key, f.request(f.stage(parent, "connect", 20, 40)))
    assert materialize(project.id, f.BASE - DAY, f.BASE + DAY) == 3
    assert materialize(project.id, f.BASE - DAY, f.BASE + DAY) == 3
    rows = _rows(buckets, project.id)
    assert len(rows) == 3
    assert rows[-1]["t_conn_ms"] == 40  # 300 - 40 -> 260
    assert rows[-1]["t_first_token_ms"] == 260


def test_a_retry_makes_the_earlier_attempt_no_longer_final(alpha, ingest, buckets):
    project, key = alpha
    run = {"llm.run.id": "run-1"}
    first = f.attempt(attributes={**run, "llm.attempt": 1, "llm.retry.cause": "timeout"}, start_ns=_at(1),
                      status_code=f.Status.STATUS_CODE_ERROR)
    ingest(key, f.request(first))
    materialize(project.id, f.BASE, f.BASE + H)
    assert [r["is_final_attempt"] for r in _rows(buckets, project.id)] == [True]
    ingest(key, f.request(f.attempt(attributes={**run, "llm.attempt": 2}, start_ns=_at(1.5))))
    materialize(project.id, f.BASE, f.BASE + H)
    rows = _rows(buckets, project.id)
    # final = latest started; t_retry = 1.5 min - 1 min -> 30,000 ms, over the run of 2 attempts
    assert [(r["attempt"], r["is_final_attempt"], r["t_retry_ms"], r["run_attempt_count"]) for r in rows] == [
        (1, False, None, 2), (2, True, 30_000, 2)]


def test_dirty_hours_are_exactly_the_hours_that_got_attempts(alpha, beta, ingest, buckets):
    (project, key), (other, other_key) = alpha, beta
    before = datetime.now(timezone.utc) - timedelta(seconds=1)
    ingest(key, f.request(f.attempt(start_ns=_at(30)), f.attempt(start_ns=_at(40)), f.attempt(start_ns=_at(135))))
    ingest(other_key, f.request(f.attempt(start_ns=_at(75))))
    # 10:30 and 10:40 -> 10:00; 12:15 -> 12:00; bob's 11:15 -> 11:00
    assert dirty_hours(before) == [(project.id, f.BASE), (project.id, f.BASE + 2 * H), (other.id, f.BASE + H)]
    assert dirty_hours(datetime.now(timezone.utc) + timedelta(seconds=1)) == []


def test_a_late_stage_span_marks_its_hour_and_the_one_before_near_the_boundary(alpha, ingest, buckets):
    project, key = alpha
    parent = f.attempt(reused=False, start_ns=_at(59.9))
    ingest(key, f.request(parent))
    since = datetime.now(timezone.utc) - timedelta(milliseconds=1)
    ingest(key, f.request(f.stage(parent, "connect", 7000, 30)))  # starts at 11:00:01, parent queued at 10:59:54
    assert dirty_hours(since) == [(project.id, f.BASE), (project.id, f.BASE + H)]


def test_a_span_near_the_boundary_marks_the_hour_before_only_for_its_trace_or_run(alpha, ingest, buckets):
    """A stage span or a retry in the first 10 minutes of an hour marks the hour before when an attempt of its trace,
    or for a retry of its run, is queued there; not otherwise (that re-materialized a whole hour every minute)."""
    project, key = alpha
    run = {"llm.run.id": "run-7"}
    earlier = f.attempt(start_ns=_at(55), attributes={**run, "llm.attempt": 1})  # 10:55, its own trace
    ingest(key, f.request(earlier, f.attempt(start_ns=_at(58))))
    since = datetime.now(timezone.utc) - timedelta(milliseconds=1)
    other = f.attempt(start_ns=_at(62))  # 11:02, a trace of its own
    retry = f.attempt(start_ns=_at(63), attributes={"llm.attempt": 2})  # of no stored run
    ingest(key, f.request(other, f.stage(other, "tokenize", 1, 2), retry))
    assert dirty_hours(since) == [(project.id, f.BASE + H)]
    since = datetime.now(timezone.utc) - timedelta(milliseconds=1)
    ingest(key, f.request(f.attempt(start_ns=_at(64), attributes={**run, "llm.attempt": 2})))  # run-7's retry
    assert dirty_hours(since) == [(project.id, f.BASE), (project.id, f.BASE + H)]
    since = datetime.now(timezone.utc) - timedelta(milliseconds=1)
    ingest(key, f.request(f.attempt(start_ns=_at(75), attributes={**run, "llm.attempt": 3})))  # 11:15: too late
    assert dirty_hours(since) == [(project.id, f.BASE + H)]


def test_materialize_dirty_recomputes_each_dirty_hour(alpha, ingest, buckets):
    project, key = alpha
    since = datetime.now(timezone.utc) - timedelta(seconds=1)
    ingest(key, f.request(f.attempt(start_ns=_at(10)), f.attempt(start_ns=_at(70)), f.attempt(start_ns=_at(80))))
    summary = materialize_dirty(since)
    assert summary == {"hours": 2, "rows": 3, "projects": [project.id]}
    assert len(_rows(buckets, project.id)) == 3


def test_bob_gets_no_rows_from_alices_spans(alpha, beta, ingest, buckets):
    (project, key), (other, _) = alpha, beta
    ingest(key, f.request(f.attempt()))
    assert materialize(other.id, f.BASE - DAY, f.BASE + DAY) == 0
    assert _rows(buckets, other.id) == []


def test_the_statements_skipped_for_want_of_an_attempt_span_would_write_nothing(alpha, ingest, buckets):
    # materialize() asks materialize_inputs (attempts) before the request_buckets INSERT (0.1-0.6 s to plan):
    # here each window has one long attempt queued inside it, started at a distance around the INSERT's read bounds;
    # wherever the question finds none, the INSERT run anyway writes no row
    project, key = alpha
    offsets_ms = [-2 * 3600_000 - 1, -2 * 3600_000, -3600_000 - 1, -3600_000, 0, 30 * 60_000]
    windows = [f.BASE + timedelta(hours=10 * (i + 1)) for i in range(len(offsets_ms))]
    spans = []
    for window, offset in zip(windows, offsets_ms):
        start_ns = int(window.timestamp()) * 10**9 + offset * f.MS
        queued = 30 * 60_000 - offset  # 30 minutes into the window, from the span's start
        spans.append(f.span(start_ns=start_ns, duration_ms=queued + 1000, attributes={"tenant.id": "t"},
                            events={"queued": queued, "admitted": queued + 10, "first_token": queued + 200,
                                    "last_token": queued + 900, "released": queued + 950}))
    ingest(key, f.request(*spans))
    found, written = [], []
    for i, window in enumerate(windows):
        params = {"project_id": project.id, "start": window.replace(tzinfo=None),
                  "end": (window + H).replace(tzinfo=None), "computed_at": datetime(2030, 1, 1, 0, 0, i)}
        found.append(bool(client.query(sql("materialize_inputs"), parameters=params)[0]["attempts"]))
        client.command(sql("materialize_request_buckets"), parameters=params)
        [(n,)] = client.query_rows("SELECT count() FROM request_buckets WHERE computed_at = {c:DateTime64(3, 'UTC')}",
                                   parameters={"c": params["computed_at"]})
        written.append(n)
    assert found == [False, True, True, True, True, True], found
    assert written[0] == 0 and written[-2] == 1, written  # skipped: nothing lost; an attempt read: its row
    assert all(any_ or n == 0 for any_, n in zip(found, written)), (found, written)


def test_a_window_without_attempts_is_materialized_as_empty_hours(alpha, ingest, buckets):
    project, key = alpha
    ingest(key, f.request(f.attempt(), f.attempt()))
    assert materialize(project.id, f.BASE - DAY, f.BASE + DAY) == 2
    # far from them: nothing to read, the INSERTs skipped, and the hours still recorded (as versions with no rows)
    far = f.BASE + 10 * DAY
    assert materialize(project.id, far, far + 2 * H) == 0
    [(hours,)] = buckets.query_rows("SELECT count() FROM materialized_hours WHERE project_id = {p:UInt32} "
                                    "AND hour >= {s:DateTime64(9, 'UTC')}", parameters={"p": project.id, "s": far})
    assert hours == 2
    assert materialize(project.id, f.BASE - DAY, f.BASE + DAY) == 2
