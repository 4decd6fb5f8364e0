"""Incident detection on per-minute series: the walk and the baseline on hand-made series (pure), then the
series query, reconcile and the minute job on request_buckets rows written by SQL (fast, no simulator)."""
import math
import random
import statistics
from datetime import datetime, timedelta, timezone

import numpy as np

from analysis import buckets
from analysis.diagnosis.thresholds import DEFAULT as TH
from analysis.incidents.baseline import Chooser
from analysis.incidents.detection import detect
from analysis.scope import Scope
from tests.helpers import publish_buckets

T0 = datetime(2026, 11, 20, 8, 0, tzinfo=timezone.utc)
MINUTE = timedelta(minutes=1)


def point(i: int, attempts: int = 100, **p95) -> dict:
    """Minute i after T0 with every bucket's p95 (ms) at its base value, or as given; p50 at half of it."""
    base = {"t_queue": 0.0, "t_conn": 5.0, "t_first_token": 200.0, "t_stream": 800.0, "t_post": 10.0,
            "t_retry": 0.0, "ttft": 210.0, "total": 1020.0}
    rng = random.Random(i)
    out = {"at": T0 + i * MINUTE, "attempts": attempts, "errors": 0}
    for name in buckets.ALL:
        value = p95.get(name, base[name] * rng.uniform(0.93, 1.07))
        out[name] = {"p50": value / 2, "p95": value, "count": attempts}
    return out


def run(points, start=None, end=None):
    start = start or points[0]["at"]
    end = end or points[-1]["at"] + MINUTE
    chooser = Chooser(points, [], lambda at: False, 3, TH.incident_min_attempts, TH.incident_baseline_minutes)
    return detect(points, start, end, chooser, TH)


def grown(i, lo, hi, **p95):
    return point(i, **p95) if lo <= i < hi else point(i)


def test_a_doubled_bucket_opens_at_its_first_minute_and_closes_at_the_first_minute_back():
    series = [grown(i, 40, 55, t_first_token=450.0, ttft=460.0) for i in range(80)]
    found = run(series)
    assert [(f.start, f.end) for f in found.incidents] == [(T0 + 40 * MINUTE, T0 + 55 * MINUTE)]
    [incident] = found.incidents
    assert set(incident.departed(TH)) == {"t_first_token", "ttft"}
    assert incident.peak()["buckets"]["t_first_token"]["p95"] == 450.0
    assert incident.baseline.median("t_first_token") < 215  # the incident's own minutes are not its baseline


def test_a_steady_service_has_no_incident_however_slow():
    slow = [point(i, t_first_token=30_000.0 * random.Random(i).uniform(0.9, 1.1), total=90_000.0) for i in range(120)]
    assert run(slow).incidents == []


def test_a_route_is_judged_on_its_medians_and_left_out_where_its_service_has_an_incident():
    """A minor route's p95 is about its few attempts' maximum: three minutes of it tripled (p50 steady) are an
    incident on p95s, not on the p50s a slice is judged on (SLICE_LEVEL); a shift of its typical request is one.
    beside() keeps a route's incident only where the whole service has none."""
    from analysis.incidents.detection import SLICE_LEVEL, Found, beside

    def route_point(i, p50=100.0, p95=300.0):
        out = point(i, attempts=12)
        for name in ("t_first_token", "ttft"):
            out[name] = {"p50": p50 * random.Random(i).uniform(0.95, 1.05), "p95": p95, "count": 12}
        return out

    def judged(series, level):
        chooser = Chooser(series, [], lambda at: False, 3, TH.incident_min_attempts, TH.incident_baseline_minutes)
        return detect(series, series[0]["at"], series[-1]["at"] + MINUTE, chooser, TH, level).incidents

    spiky = [route_point(i, p95=900.0) if 40 <= i < 46 else route_point(i) for i in range(80)]
    assert len(judged(spiky, "p95")) == 1 and judged(spiky, SLICE_LEVEL) == []
    shifted = [route_point(i, p50=400.0, p95=1200.0) if 40 <= i < 55 else route_point(i) for i in range(80)]
    [found] = judged(shifted, SLICE_LEVEL)
    assert (found.start, found.end, found.level) == (T0 + 40 * MINUTE, T0 + 55 * MINUTE, "p50")
    assert found.peak()["ttft"]["p95"] == 1200.0  # what is stored and shown stays the p95
    service_wide = Found(T0 + 50 * MINUTE, found.baseline, end=None)
    assert beside([service_wide], [found]) == [] and beside([], [found]) == [found]
    assert beside([Found(T0, found.baseline, end=T0 + 40 * MINUTE)], [found]) == [found]  # ends as it starts


def test_noise_tiny_buckets_and_short_blips_are_not_incidents():
    series = [point(i) for i in range(90)]
    for i in (30, 31):  # two minutes off: shorter than the persistence
        series[i] = point(i, total=5000.0)
    for i in range(50, 70):  # t_queue 0 -> 5 ms: under the floor
        series[i] = point(i, t_queue=5.0)
    assert run(series).incidents == []


def test_quiet_minutes_are_neither_off_nor_normal_and_no_baseline_means_no_detection():
    series = [point(i, attempts=3 if i % 2 else 100) for i in range(60)]
    series[40:] = [point(i, attempts=3, total=9000.0) for i in range(40, 60)]  # slow but too few attempts to judge
    found = run(series)
    assert found.incidents == [] and found.judged == 20
    early = run([point(i) for i in range(8)] + [point(i, total=9000.0) for i in range(8, 14)])
    assert early.incidents == [] and early.no_baseline == 14  # no 15 minutes of traffic before these: not judged


def test_an_incident_still_off_at_the_end_is_ongoing_and_two_incidents_are_two():
    series = [point(i) for i in range(100)]
    for lo, hi in ((30, 42), (60, 100)):
        series[lo:hi] = [point(i, t_stream=2000.0, total=2300.0) for i in range(lo, hi)]
    found = run(series)
    assert [(f.start, f.end) for f in found.incidents] == [(T0 + 30 * MINUTE, T0 + 42 * MINUTE), (T0 + 60 * MINUTE, None)]


def test_spikes_around_a_large_incident_neither_start_it_early_nor_keep_it_open():
    """TTFT p95 spikes past the departure limit (1.5x) just before and after a 6x incident: nearer the baseline
    than the incident (detection.Levels.bar), they are neither its onset nor minutes that keep it open."""
    def slow(i):
        return point(i, t_first_token=1200.0, ttft=1210.0)

    def spike(i):
        return point(i, t_first_token=350.0, ttft=360.0)

    series = [slow(i) if 40 <= i < 55 else spike(i) if i in (38, 39, 56, 58, 59, 61) else point(i) for i in range(80)]
    found = run(series)
    assert [(f.start, f.end) for f in found.incidents] == [(T0 + 40 * MINUTE, T0 + 55 * MINUTE)]


def test_spikes_just_before_an_incident_with_a_normal_minute_among_them_are_not_its_onset():
    """Healthy TTFT p95 spikes past 3x its median now and then (the alignment measure's network case): three off
    minutes (two of them spikes) and a normal one just before a 6x incident open it, but its onset is where
    incident_persist_minutes minutes in a row are nearer the incident than the baseline."""
    spikes = {16: 660.0, 17: 430.0, 18: 650.0}
    series = [point(i, t_first_token=spikes[i], ttft=spikes[i]) if i in spikes else grown(
        i, 20, 33, t_first_token=1300.0, ttft=1300.0) for i in range(50)]
    assert [(f.start, f.end) for f in run(series, start=T0 + 15 * MINUTE).incidents] == [
        (T0 + 20 * MINUTE, T0 + 33 * MINUTE)]


def test_the_minutes_that_close_a_blip_can_start_the_next_incident():
    """Three TTFT spikes open an incident that closes as a blip; its closing minutes, normal for TTFT, are judged
    again with nothing open, so the post-processing incident starting among them starts there."""
    series = [point(i) for i in range(80)]
    series[30:33] = [point(i, t_first_token=420.0, ttft=430.0) for i in range(30, 33)]
    series[33:50] = [point(i, t_post=3000.0, total=4000.0) for i in range(33, 50)]
    found = run(series)
    assert [(f.start, f.end) for f in found.incidents] == [(T0 + 33 * MINUTE, T0 + 50 * MINUTE)]
    assert found.incidents[0].own == ("t_post", "total")


def test_an_open_incident_is_reported_once_it_has_lasted_its_persistence():
    """Off minutes at the end of the series: reported, ongoing from its onset, once incident_open_minutes of them
    (3: stored within about 4 minutes of the onset), not before."""
    def series(off_minutes):
        return [point(i, t_post=3000.0, total=4000.0) if i >= 40 else point(i) for i in range(40 + off_minutes)]
    assert TH.incident_open_minutes == TH.incident_persist_minutes < TH.incident_min_minutes
    assert run(series(TH.incident_open_minutes - 1)).incidents == []
    [ongoing] = run(series(TH.incident_open_minutes)).incidents
    assert (ongoing.start, ongoing.end) == (T0 + 40 * MINUTE, None)


def test_an_open_incident_of_a_service_gone_silent_closes_with_its_last_minute_of_traffic():
    """Off from minute 40, then nothing at all after minute 52: closed at 53 (the end of the last minute with
    traffic) once incident_silence_minutes (10) have passed without an attempt, with the reason; not before."""
    series = [point(i, t_post=3000.0, total=4000.0) if i >= 40 else point(i) for i in range(53)]
    [still] = run(series, end=T0 + 62 * MINUTE).incidents  # 9 silent minutes: still open
    assert still.end is None
    [closed] = run(series, end=T0 + 63 * MINUTE).incidents
    assert (closed.start, closed.end, closed.end_reason) == (T0 + 40 * MINUTE, T0 + 53 * MINUTE, "silence")
    # traffic coming back after the silence is judged with nothing open: still slow, a new incident
    back = series + [point(i, t_post=3000.0, total=4000.0) for i in range(70, 80)]
    first, second = run(back, end=T0 + 80 * MINUTE).incidents
    assert (first.end, first.end_reason, second.start, second.end) == (T0 + 53 * MINUTE, "silence", T0 + 70 * MINUTE,
                                                                        None)


def test_the_previous_days_hour_is_the_baseline_when_it_has_traffic():
    today = [point(24 * 60 + i, total=2500.0) for i in range(60)]  # slower than yesterday all hour long
    yesterday = [point(i) for i in range(60)]
    chooser = Chooser(today, yesterday, lambda at: False, 3, TH.incident_min_attempts, TH.incident_baseline_minutes)
    found = detect(today, today[0]["at"], today[-1]["at"] + MINUTE, chooser, TH)
    assert [f.start for f in found.incidents] == [today[0]["at"]]
    assert found.incidents[0].baseline.source == "previous_day"
    excluded = Chooser(today, yesterday, lambda at: at < T0 + 50 * MINUTE, 3, 10, 15)
    assert excluded.at(today[10]["at"]) is None  # 10 minutes left of yesterday's hour, 10 before it today


def test_baselines_made_in_one_pass_equal_those_made_minute_by_minute():
    """Chooser.prepare stacks every judged minute's span and sorts them at once; at() must give what _summary of that
    minute's rows gives: random series with gaps, quiet minutes, unmeasured values, stored incidents left out, spans
    of 1 and 3 hours, with and without skipped minutes."""
    rng = random.Random(5)
    compared = 0
    for _ in range(60):
        points = []
        for i in range(rng.randint(0, 400)):
            if rng.random() < 0.2:
                continue
            p = point(i, attempts=rng.randint(0, 30))
            for m in buckets.ALL:
                count = rng.choice([0, 1, 5, 20])
                value = None if count == 0 or rng.random() < 0.1 else round(rng.random() * 100, 1)
                p[m] = {"p50": value, "p95": None if value is None else 2 * value, "count": count}
            points.append(p)
        stored = set(rng.sample([p["at"] for p in points], k=min(len(points), rng.randint(0, 20))))
        args = (points, [], lambda at: at in stored, rng.choice([1, 3]), 5, rng.choice([1, 10, 30]))
        batched, one_by_one = Chooser(*args), Chooser(*args)
        minutes = [p["at"] for p in points if p["attempts"] >= 5][-rng.randint(1, 300):]
        batched.prepare(minutes)
        for t in minutes:
            skip = set(rng.sample(minutes, k=min(3, len(minutes)))) if rng.random() < 0.3 else set()
            assert batched.at(t, skip) == one_by_one.at(t, skip)
            compared += batched.at(t, skip) is not None
        # and both are the statistics.median of the span's known values and of their deviations
        if (made := batched.at(minutes[-1])) is not None:
            used = [p for p in points if made.start <= p["at"] < made.end and p["attempts"] >= 5
                    and p["at"] not in stored]
            for metric, levels in made.stats.items():
                for level, (center, spread) in levels.items():
                    known = [p[metric][level] for p in used if p[metric]["count"] >= 5 and p[metric][level] is not None]
                    assert center == statistics.median(known)
                    assert spread == statistics.median(abs(v - center) for v in known)
    assert compared > 1000  # most minutes had a baseline to compare


# ---- on request_buckets rows: the series query, reconcile and the minute job ---------------------------------

ROWS_SQL = """
INSERT INTO request_buckets (project_id, service, instance, tenant, route, model, run_id, trace_id, span_id, attempt,
  status, start_at, queued_at, t_queue_ms, t_conn_ms, t_first_token_ms, t_stream_ms, t_post_ms, t_retry_ms, ttft_ms,
  total_ms, is_final_attempt, run_attempt_count, computed_at)
SELECT {p:UInt32}, {service:String}, 'gw-1', {tenant:String}, {route:String}, 'm-8b', concat({tag:String}, toString(number)),
  lower(hex(sipHash128({tag:String}, number))), lower(hex(sipHash64({tag:String}, number))), 1, 'ok',
  {start:DateTime64(9, 'UTC')} + toIntervalMillisecond(intDiv(number * 60000, {per_minute:UInt32})) AS q, q,
  NULL, 5, {first_token_ms:Float64} * (0.7 + (sipHash64(number, 1) % 600) / 1000) AS ft, 800, 10, 0,
  5 + ft, 815 + ft, 1, 1, now64(3)
FROM numbers({n:UInt64})"""


def rows(client, project_id, service, start, minutes, first_token_ms=200.0, per_minute=60, tag="a", route="/chat",
         tenant="acme"):
    """per_minute attempts a minute for `minutes` from `start`, t_first_token around first_token_ms, t_queue NULL."""
    client.command(ROWS_SQL, parameters={
        "p": project_id, "service": service, "tag": f"{tag}{start:%H%M}", "start": start.replace(tzinfo=None),
        "route": route, "tenant": tenant,
        "per_minute": per_minute, "first_token_ms": first_token_ms, "n": minutes * per_minute})
    publish_buckets(project_id)


def test_the_series_counts_logical_attempts_and_leaves_unmeasured_buckets_unknown(clickhouse, alpha):
    from analysis.reads.queries import incident_series
    project, _ = alpha
    for _ in range(2):  # the same attempts materialized twice: FINAL reads each once
        rows(clickhouse, project.id, "svc", T0, 3)
    series = incident_series(Scope(project.id, "svc", T0, T0 + 3 * MINUTE))
    assert [(p["at"], p["attempts"]) for p in series] == [(T0 + i * MINUTE, 60) for i in range(3)]
    assert series[0]["t_queue"] == {"p50": None, "p95": None, "count": 0}
    assert 140 <= series[0]["t_first_token"]["p50"] <= 260 and series[0]["t_first_token"]["count"] == 60


def _incident_service(clickhouse, project_id, service="svc", tag="a"):
    """40 normal minutes, 15 with t_first_token x3, 20 normal again: an incident [T0+40m, T0+55m)."""
    rows(clickhouse, project_id, service, T0, 40, tag=tag)
    rows(clickhouse, project_id, service, T0 + 40 * MINUTE, 15, first_token_ms=600.0, tag=tag)
    rows(clickhouse, project_id, service, T0 + 55 * MINUTE, 20, tag=tag)


def test_detection_is_stored_once_and_a_rerun_changes_nothing(clickhouse, alpha):
    from analysis.incidents.jobs import detect_service
    from analysis.incidents.records import incident_json, incidents_overlapping
    from analysis.models import Incident
    project, _ = alpha
    _incident_service(clickhouse, project.id)
    now = T0 + 80 * MINUTE
    first = detect_service(project.id, "svc", T0, T0 + 75 * MINUTE, now)
    [row] = Incident.objects.all()
    assert (first["created"], row.start, row.end) == (1, T0 + 40 * MINUTE, T0 + 55 * MINUTE)
    assert row.baseline["buckets"]["t_first_token"]["p95"] < 400 < row.peak["buckets"]["t_first_token"]["p95"]
    assert row.baseline["buckets"]["t_queue"] == {"p50": None, "p95": None}  # not measured, not 0
    assert "t_first_token" in row.detail["departed"] and "t_queue" not in row.detail["departed"]
    again = detect_service(project.id, "svc", T0, T0 + 75 * MINUTE, now + 10 * MINUTE)
    assert (again["unchanged"], again["created"], again["deleted"]) == (1, 0, 0)
    assert Incident.objects.get().updated_at == row.updated_at
    assert [i.id for i in incidents_overlapping(project.id, "svc", T0 + 50 * MINUTE, T0 + 51 * MINUTE)] == [row.id]
    assert incidents_overlapping(project.id, "svc", T0, T0 + 40 * MINUTE) == []
    shaped = incident_json(row, "http://x/incidents/1")
    assert set(shaped) == {"id", "start", "end", "verdict", "causes", "scope", "baseline", "peak", "path", "url",
                           "end_reason", "revisions"}
    assert (shaped["end_reason"], shaped["revisions"]) == (None, [])
    assert (shaped["start"], shaped["end"]) == ("2026-11-20T08:40:00Z", "2026-11-20T08:55:00Z")
    assert set(shaped["baseline"]) == {"start", "end", "buckets", "ttft", "total"}


def test_a_slow_minor_route_is_its_own_incident_and_a_service_wide_one_covers_its_routes(clickhouse, alpha):
    """/summarize (12 of 312 attempts a minute) triples its first-token time for 15 minutes: the service's p95 hardly
    moves (its top 5 % are mostly /chat's), the route's own series departs. Then both routes slow down together:
    one incident of the whole service, none of the routes beside it."""
    from analysis.incidents.jobs import detect_service
    from analysis.incidents.records import incidents_overlapping
    from analysis.models import Incident
    project, _ = alpha
    rows(clickhouse, project.id, "svc", T0, 90, per_minute=300)
    for start, minutes, ms in ((0, 40, 200.0), (40, 15, 600.0), (55, 35, 200.0)):
        rows(clickhouse, project.id, "svc", T0 + start * MINUTE, minutes, first_token_ms=ms, per_minute=12,
             route="/summarize", tag="s")
    from analysis.reads.queries import incident_series, incident_series_slices
    window = (project.id, "svc", T0 + 30 * MINUTE, T0 + 60 * MINUTE)
    together = incident_series_slices(Scope(*window), min_attempts=10, min_minutes=30, max_slices=8)
    # one tenant and one instance: nothing to judge apart from the service
    assert sorted(together) == [("", ""), ("route", "/chat"), ("route", "/summarize")]
    for (dimension, value), series in together.items():  # one read of every slice's series: each read alone gives it
        assert series == incident_series(Scope(*window, **({dimension: value} if dimension in ("route", "tenant") else {})),
                                         **({dimension: value} if dimension == "instance" else {}))
    assert sorted(incident_series_slices(Scope(*window), min_attempts=10, min_minutes=30, max_slices=1)) == [
        ("", ""), ("route", "/chat")]  # the busiest
    # /summarize has no minute of 13 attempts: too quiet for a baseline; /chat is still one route of two
    assert sorted(incident_series_slices(Scope(*window), min_attempts=13, min_minutes=30, max_slices=8)) == [
        ("", ""), ("route", "/chat")]
    out = detect_service(project.id, "svc", T0, T0 + 90 * MINUTE, T0 + 95 * MINUTE)
    [row] = Incident.objects.all()
    assert (out["created"], row.route, row.start, row.end) == (1, "/summarize", T0 + 40 * MINUTE, T0 + 55 * MINUTE)
    assert row.scope[0] == {"dimension": "route", "value": "/summarize", "share": 1.0}
    assert row.verdict != "unknown" and row.causes
    assert [i.id for i in incidents_overlapping(project.id, "svc", T0, T0 + 90 * MINUTE)] == [row.id]
    assert incidents_overlapping(project.id, "svc", T0, T0 + 90 * MINUTE, route="/chat") == []
    # both routes slow from T0+90m for 15 minutes: the whole service's incident, and the routes' are left out
    later = T0 + 90 * MINUTE
    for route, per_minute in (("/chat", 300), ("/summarize", 12)):
        rows(clickhouse, project.id, "svc", later, 15, first_token_ms=600.0, per_minute=per_minute, route=route, tag="w")
        rows(clickhouse, project.id, "svc", later + 15 * MINUTE, 15, per_minute=per_minute, route=route, tag="w")
    detect_service(project.id, "svc", later - 30 * MINUTE, later + 30 * MINUTE, later + 35 * MINUTE)
    assert sorted((i.route, i.start) for i in Incident.objects.all()) == [("", later), ("/summarize", T0 + 40 * MINUTE)]


def test_a_slow_minor_tenant_is_the_services_incident_with_the_tenant_first_in_scope(clickhouse, alpha):
    """umbrella (12 of 312 attempts a minute, on the service's one route) triples its first-token time for 15
    minutes: found on the tenant's own series, stored as the service's incident, the tenant first in its scope."""
    from analysis.incidents.jobs import detect_service
    from analysis.incidents.records import incidents_overlapping
    from analysis.models import Incident
    project, _ = alpha
    rows(clickhouse, project.id, "svc", T0, 90, per_minute=300)
    for start, minutes, ms in ((0, 40, 200.0), (40, 15, 600.0), (55, 35, 200.0)):
        rows(clickhouse, project.id, "svc", T0 + start * MINUTE, minutes, first_token_ms=ms, per_minute=12,
             tenant="umbrella", tag="u")
    detect_service(project.id, "svc", T0, T0 + 90 * MINUTE, T0 + 95 * MINUTE)
    [row] = Incident.objects.all()
    assert (row.route, row.start, row.end) == ("", T0 + 40 * MINUTE, T0 + 55 * MINUTE)
    assert row.detail["slice"] == {"dimension": "tenant", "value": "umbrella"}
    assert row.scope[0]["dimension"] == "tenant" and row.scope[0]["value"] == "umbrella"
    assert [i.id for i in incidents_overlapping(project.id, "svc", T0, T0 + 90 * MINUTE, tenant="umbrella")] == [row.id]
    assert incidents_overlapping(project.id, "svc", T0, T0 + 90 * MINUTE, tenant="acme") == []
    from analysis.reads.queries import incident_series  # what the incident page draws an instance's incident on
    assert incident_series(Scope(project.id, "svc", T0, T0 + 9 * MINUTE),
                           instance="gw-1") == incident_series(Scope(project.id, "svc", T0, T0 + 9 * MINUTE)) != []
    assert incident_series(Scope(project.id, "svc", T0, T0 + 9 * MINUTE), instance="gw-9") == []


def test_an_ongoing_incident_is_open_then_closed_keeping_its_id(clickhouse, alpha):
    from analysis.incidents.jobs import detect_service
    from analysis.models import Incident
    project, _ = alpha
    rows(clickhouse, project.id, "svc", T0, 40)
    rows(clickhouse, project.id, "svc", T0 + 40 * MINUTE, 10, first_token_ms=600.0)
    detect_service(project.id, "svc", T0, T0 + 50 * MINUTE, T0 + 50 * MINUTE)
    opened = Incident.objects.get()
    assert (opened.start, opened.end) == (T0 + 40 * MINUTE, None)
    rows(clickhouse, project.id, "svc", T0 + 50 * MINUTE, 5, first_token_ms=600.0, tag="b")
    rows(clickhouse, project.id, "svc", T0 + 55 * MINUTE, 10, tag="b")
    out = detect_service(project.id, "svc", T0 + 45 * MINUTE, T0 + 65 * MINUTE, T0 + 65 * MINUTE)
    closed = Incident.objects.get()
    assert (out["closed"], closed.id, closed.start, closed.end) == (1, opened.id, T0 + 40 * MINUTE, T0 + 55 * MINUTE)


def _queue(project, service, start, end, now):
    """What queue.queue_work leaves for spans of [start, end) (these tests write request_buckets, not spans)."""
    from analysis.models import JudgeWork
    JudgeWork.objects.create(project=project, service=service, start=start, end=end, queued_at=now)


def test_the_minute_job_judges_what_is_queued_and_a_late_backfill_hours_later(clickhouse, alpha):
    from analysis.incidents.jobs import judge_queued
    from analysis.models import Incident, JudgeWork
    project, _ = alpha
    _incident_service(clickhouse, project.id)
    _queue(project, "svc", T0, T0 + 75 * MINUTE, T0 + 75 * MINUTE)
    out = judge_queued(T0 + 75 * MINUTE)
    assert (out["services"], out["incidents"]["created"], out["deferred"]) == (1, 1, 0)
    assert Incident.objects.get().start == T0 + 40 * MINUTE
    # hours later, an incident of another service arrives late: its queued minutes are judged, whenever they are
    later = T0 + 6 * 60 * MINUTE
    _incident_service(clickhouse, project.id, "late", tag="z")
    _queue(project, "late", T0, T0 + 75 * MINUTE, later)
    out = judge_queued(later)
    assert (out["services"], out["deferred"]) == (1, 0)
    assert sorted(Incident.objects.values_list("service", "start")) == [("late", T0 + 40 * MINUTE),
                                                                       ("svc", T0 + 40 * MINUTE)]
    assert judge_queued(later + MINUTE)["services"] == 0 and not JudgeWork.objects.exists()


def test_queued_minutes_wait_for_their_hours_to_be_materialized_and_the_minute_in_progress(clickhouse, alpha):
    from analysis.incidents.jobs import judge_queued
    from analysis.models import DirtyHour, Incident, JudgeWork
    project, _ = alpha
    _incident_service(clickhouse, project.id)
    now = T0 + 75 * MINUTE + timedelta(seconds=20)
    _queue(project, "svc", T0, T0 + 76 * MINUTE, now)  # the last queued minute is still in progress
    DirtyHour.objects.create(project=project, hour=T0, queued_at=now)
    assert judge_queued(now)["services"] == 0 and JudgeWork.objects.get().start == T0  # not materialized yet
    DirtyHour.objects.all().delete()
    assert judge_queued(now)["services"] == 1
    assert Incident.objects.get().start == T0 + 40 * MINUTE
    left = JudgeWork.objects.get()  # the minute in progress waits for its end
    assert (left.start, left.end) == (T0 + 75 * MINUTE, T0 + 76 * MINUTE)


def test_a_failing_service_goes_to_the_back_and_stays_pending(clickhouse, alpha, monkeypatch):
    from analysis.incidents import jobs
    from analysis.models import JudgeWork
    project, _ = alpha
    _incident_service(clickhouse, project.id, "bad", tag="b")
    _incident_service(clickhouse, project.id, "good", tag="g")
    _queue(project, "bad", T0, T0 + 75 * MINUTE, T0)
    _queue(project, "good", T0, T0 + 75 * MINUTE, T0 + MINUTE)
    real = jobs.detect_service

    def flaky(project_id, service, *args, **kwargs):
        if service == "bad":
            raise RuntimeError("boom")
        return real(project_id, service, *args, **kwargs)
    monkeypatch.setattr(jobs, "detect_service", flaky)
    out = jobs.judge_queued(T0 + 75 * MINUTE)
    assert (out["services"], out["errors"], out["deferred"]) == (1, 1, 1)
    bad = JudgeWork.objects.get()
    assert (bad.service, bad.failures, bad.queued_at) == ("bad", 1, T0 + 75 * MINUTE)


def test_the_minute_job_reads_its_services_series_in_batches(clickhouse, alpha, monkeypatch):
    """judge_queued reads the series of BATCH services at a time (two reads a batch: the stretch, the day before),
    and finds what judging each service on its own finds; a service whose stretch an open incident moved back reads
    its own."""
    from analysis.incidents import jobs
    from analysis.models import Incident
    from analysis.reads import queries
    project, _ = alpha
    for k, service in enumerate(("a", "b", "c")):
        _incident_service(clickhouse, project.id, service, tag=f"t{k}")
    rows(clickhouse, project.id, "quiet", T0, 75, tag="q")
    read = []
    real = queries.incident_series_slices_of
    monkeypatch.setattr(queries, "incident_series_slices_of", lambda p, services, *a, **k: (
        read.append(sorted(services)), real(p, services, *a, **k))[1])
    monkeypatch.setattr(jobs, "BATCH", 3)
    for service in ("a", "b", "c", "quiet"):  # queued together: one stretch, read in batches
        _queue(project, service, T0 + 10 * MINUTE, T0 + 75 * MINUTE, T0 + 75 * MINUTE)
    out = jobs.judge_queued(T0 + 75 * MINUTE)
    assert (out["services"], out["incidents"]["created"]) == (4, 3)
    assert sorted(map(len, read)) == [1, 1, 3, 3]  # two batches of 3 and 1 services, each read twice
    batched = sorted(Incident.objects.values_list("service", "start", "end"))
    assert batched == [(s, T0 + 40 * MINUTE, T0 + 55 * MINUTE) for s in ("a", "b", "c")]
    Incident.objects.all().delete()
    for service in ("a", "b", "c", "quiet"):  # each judged alone, as a recheck does
        jobs.detect_service(project.id, service, T0 - 45 * MINUTE, T0 + 75 * MINUTE, T0 + 75 * MINUTE)
    assert sorted(Incident.objects.values_list("service", "start", "end")) == batched
    series = jobs.Series(project.id, ["a", "b"], T0 - 45 * MINUTE, T0 + 75 * MINUTE, jobs.configured())
    read.clear()
    alone = series.of("a", T0, T0 + 75 * MINUTE)  # another stretch: read for it alone
    assert read == [["a"], ["a"]] and alone[0][("", "")][0]["at"] == T0


def test_minutes_judged_all_at_once_are_judged_as_one_by_one(monkeypatch):
    """detection.off_minutes (every minute against its baseline with nothing skipped, in numpy) equals is_off per
    minute; and a walk that takes its answers where it may finds what a walk judging every minute alone finds, on
    random series with incidents, spikes, quiet minutes and unmeasured buckets, at both levels."""
    from analysis.incidents import detection
    from analysis.incidents.baseline import matrix
    rng = random.Random(11)
    compared = found = 0
    for trial in range(60):
        points = []
        # slow stretches that ramp up over a few minutes (minutes near the limits), calm or spiky noise (a wide MAD)
        slow = [(rng.randrange(60, 200), rng.randrange(3, 30), rng.uniform(1.3, 5), rng.randint(1, 8))
                for _ in range(rng.randint(0, 3))]
        noise = rng.choice([0.05, 0.3, 0.8])
        for i in range(rng.randint(30, 260)):
            factor = max([1 + (peak - 1) * min(1, (i - s + 1) / ramp) for s, n, peak, ramp in slow if s <= i < s + n],
                         default=1.0)
            spike = rng.uniform(2, 4) if rng.random() < 0.05 else 1.0
            jitter = [math.exp(rng.uniform(-noise, noise)) for _ in range(3)]
            p = point(i, attempts=rng.choice([100, 100, 100, 3]), ttft=210.0 * factor * spike * jitter[0],
                      t_first_token=200.0 * factor * spike * jitter[1], total=1020.0 * factor * jitter[2])
            if rng.random() < 0.1:
                p["t_queue"] = {"p50": None, "p95": None, "count": 0}
            points.append(p)
        level = rng.choice(["p95", "p50"])
        judged = [p for p in points if p["attempts"] >= TH.incident_min_attempts]
        chooser = Chooser(points, [], lambda at: False, 3, TH.incident_min_attempts, TH.incident_baseline_minutes)
        center, spread, has = chooser.prepare([p["at"] for p in judged])
        at_once = detection.off_minutes(matrix(judged, TH.incident_min_attempts), center, spread, TH, level)
        for p, off, known in zip(judged, at_once, has):
            baseline = chooser.at(p["at"])
            assert known == (baseline is not None)
            assert off == (baseline is not None and detection.is_off(p, baseline, TH, level)), p["at"]
            compared += baseline is not None

        def walk():
            return detect(points, points[0]["at"], points[-1]["at"] + MINUTE,
                          Chooser(points, [], lambda at: False, 3, TH.incident_min_attempts,
                                  TH.incident_baseline_minutes), TH, level)
        quick = walk()
        with monkeypatch.context() as m:  # every minute through chooser.at and is_off, as before off_minutes
            m.setattr(detection, "off_minutes", lambda values, *a, **k: np.ones(len(values), dtype=bool))
            slow_walk = walk()
        assert [(f.start, f.end, f.own) for f in quick.incidents] == [(f.start, f.end, f.own) for f in slow_walk.incidents]
        assert (quick.judged, quick.no_baseline) == (slow_walk.judged, slow_walk.no_baseline)
        found += len(quick.incidents)
    assert compared > 3000 and found >= 10


def test_a_services_minutes_are_judged_while_other_services_keep_their_hour_queued(clickhouse, alpha):
    """A fleet's burst keeps its hours queued for materializing until its last service is sent: a service whose
    newest span is older than the hour's last materialization is judged meanwhile, one with a newer span waits."""
    from analysis.incidents.jobs import judge_queued
    from analysis.models import DirtyHour, JudgeWork
    from store import client
    project, _ = alpha
    _incident_service(clickhouse, project.id, "early", tag="e")
    [(materialized,)] = client.query_rows("SELECT max(computed_at) FROM materialized_hours WHERE project_id = "
                                          "{p:UInt32}", parameters={"p": project.id})
    materialized = materialized.replace(tzinfo=timezone.utc)
    now = T0 + 75 * MINUTE
    JudgeWork.objects.create(project=project, service="early", start=T0, end=T0 + 75 * MINUTE, queued_at=now,
                             ingested_until=materialized - timedelta(seconds=10))
    JudgeWork.objects.create(project=project, service="late", start=T0, end=T0 + 75 * MINUTE, queued_at=now,
                             ingested_until=materialized + timedelta(seconds=10))
    DirtyHour.objects.create(project=project, hour=T0, queued_at=now)  # another service's spans came since
    out = judge_queued(now)
    assert (out["services"], list(JudgeWork.objects.values_list("service", flat=True))) == (1, ["late"])


def test_re_detection_keeps_the_oldest_id_merges_the_others_and_retires_what_it_no_longer_finds(clickhouse, alpha,
                                                                                                 client):
    """Stored before: #a from 08:42 (its onset was seen late), #b from 08:47 (a split of the same change), #c from
    09:10 (where the latency is back at baseline). Judged again on the data: one incident from 08:40 keeps #a's id,
    its onset revision kept; #b's link redirects to it; #c's answers 410 with what happened."""
    from analysis.incidents.jobs import detect_service
    from analysis.models import Incident
    from tests import factories as f
    project, key = alpha
    _incident_service(clickhouse, project.id)
    a = f.incident(project, "svc", start=T0 + 42 * MINUTE, minutes=4)
    b = f.incident(project, "svc", start=T0 + 47 * MINUTE, minutes=6)
    c = f.incident(project, "svc", start=T0 + 70 * MINUTE, minutes=3)
    out = detect_service(project.id, "svc", T0, T0 + 75 * MINUTE, T0 + 80 * MINUTE)
    [kept] = Incident.objects.all()
    assert (kept.pk, kept.start, kept.end) == (a.pk, T0 + 40 * MINUTE, T0 + 55 * MINUTE)
    assert (out["merged"], out["deleted"]) == (1, 1)
    texts = [r["text"] for r in kept.revisions]
    assert "onset revised from 08:42 to 08:40 as more spans arrived" in texts
    assert f"incident #{b.pk} (from 08:47) merged into this one as more spans arrived" in texts
    headers = {"Authorization": f"Bearer {key}"}
    moved = client.get(f"/api/v1/incidents/{b.pk}", headers=headers)
    assert (moved.status_code, moved.json()["merged_into"], moved["Location"]) == (
        301, a.pk, f"/api/v1/incidents/{a.pk}")
    gone = client.get(f"/api/v1/incidents/{c.pk}", headers=headers)
    assert gone.status_code == 410 and gone.json()["reason"] == "not_found"
    assert client.get(f"/api/v1/incidents/{a.pk}", headers=headers).json()["revisions"] == kept.revisions


def test_an_open_incident_of_a_service_gone_silent_is_closed_by_the_minute_job(clickhouse, alpha):
    """Slow from 08:40 and nothing after 08:52: with nothing queued, the minute job judges the open incident's
    service anyway, and 10 silent minutes after its last traffic it closes at 08:52 + 1 minute, saying why."""
    from analysis.incidents.jobs import judge_queued
    from analysis.models import Incident
    project, _ = alpha
    rows(clickhouse, project.id, "svc", T0, 40)
    rows(clickhouse, project.id, "svc", T0 + 40 * MINUTE, 13, first_token_ms=600.0)
    _queue(project, "svc", T0, T0 + 53 * MINUTE, T0 + 53 * MINUTE)
    judge_queued(T0 + 54 * MINUTE)
    assert Incident.objects.get().end is None
    assert judge_queued(T0 + 60 * MINUTE)["open"] == 1 and Incident.objects.get().end is None  # 7 silent minutes
    judge_queued(T0 + 64 * MINUTE)
    closed = Incident.objects.get()
    assert (closed.start, closed.end, closed.detail["end_reason"]) == (T0 + 40 * MINUTE, T0 + 53 * MINUTE, "silence")
