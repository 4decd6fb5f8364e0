"""analysis.reads.queries over request_buckets, on small fixtures whose numbers are worked out by hand."""
from datetime import timedelta

import pytest

from analysis import stats
from analysis.reads import queries
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests import factories as f

DAY = timedelta(days=1)
ERROR = f.Status.STATUS_CODE_ERROR
SVC = "llm-gateway"


@pytest.fixture
def buckets(clickhouse):
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")
    return clickhouse


@pytest.fixture
def send(alpha, ingest, buckets):
    """send(*requests): ingest for alice and materialize her whole day; returns the project id."""
    project, key = alpha

    def go(*requests):
        ingest(key, *requests)
        materialize(project.id, f.BASE - DAY, f.BASE + DAY)
        return project.id
    return go


def _at(ms: float) -> int:
    return f.BASE_NS + int(ms * f.MS)


def _window(project_id):
    return (project_id, SVC, f.BASE - DAY, f.BASE + DAY)


def test_bucket_quantiles_are_exact_and_t_retry_is_over_runs(send):
    # llm.attempt 1: each attempt is a run of its own (without any run attribute t_retry is not measured)
    pid = send(f.request(*[f.attempt(t_queue_ms=q, attributes={"llm.attempt": 1}) for q in (10, 20, 30, 40, 100)]))
    out = queries.bucket_distribution(Scope(*_window(pid)))
    # sorted 10 20 30 40 100: p50 rank 2 -> 30; p95 at 3.8 -> 40 + 0.8 x 60 = 88; p99 at 3.96 -> 97.6; mean 40
    assert out["requests"] == 5
    assert out["buckets"]["t_queue"] == pytest.approx({"p50": 30, "p95": 88, "p99": 97.6, "mean": 40, "count": 5})
    # total = t_queue + 300 + 900 + 15: p50 1245
    assert out["buckets"]["total"]["p50"] == 1245
    assert out["buckets"]["t_retry"] == {"p50": 0, "p95": 0, "p99": 0, "mean": 0, "count": 5}


def test_an_empty_window_gives_counts_of_zero_and_no_quantiles(send):
    pid = send(f.request(f.attempt()))
    out = queries.bucket_distribution(Scope(pid, SVC, f.BASE - 2 * DAY, f.BASE - DAY))
    assert out["requests"] == 0
    assert out["buckets"]["ttft"] == {"p50": None, "p95": None, "p99": None, "mean": None, "count": 0}


def test_route_and_tenant_filters_and_grouping_by_dimension(send):
    pid = send(f.request(f.attempt(t_queue_ms=10, route="/a", tenant="acme"), f.attempt(t_queue_ms=30, route="/a"),
                         f.attempt(t_queue_ms=50, route="/b", tenant="acme")))
    assert queries.bucket_distribution(Scope(*_window(pid), route="/a"))["buckets"]["t_queue"]["p50"] == 20  # 10, 30
    assert queries.bucket_distribution(Scope(*_window(pid), tenant="acme"))["buckets"]["t_queue"]["p50"] == 30  # 10, 50
    by_route = queries.bucket_distribution_by_dimension(Scope(*_window(pid)), "route")
    assert [(r["value"], r["requests"], r["buckets"]["t_queue"]["p50"]) for r in by_route] == [("/a", 2, 20), ("/b", 1, 50)]
    with pytest.raises(ValueError):
        queries.bucket_distribution_by_dimension(Scope(*_window(pid)), "span_id")


def test_prompt_length_segments(send):
    def prompt(tokens, t_first_token_ms):
        return f.attempt(t_first_token_ms=t_first_token_ms, attributes={"gen_ai.usage.input_tokens": tokens})
    pid = send(f.request(prompt(500, 300), prompt(2000, 500), prompt(3000, 600), prompt(20000, 1000)))
    rows = queries.bucket_distribution_by_segment(Scope(*_window(pid)))
    # ttft = 20 (t_queue) + t_first_token: <1k 320; 1-4k 520 and 620 -> p50 570; 4-16k none; >16k 1020
    assert [(r["segment"], r["requests"], r["buckets"]["ttft"]["p50"]) for r in rows] == [
        ("<1k", 1, 320), ("1-4k", 2, 570), (">16k", 1, 1020)]
    assert queries.segment_labels([500, 2000]) == ["<500", "500-2k", ">2k"]


def test_request_shares_stages_and_decode(send):
    a = f.attempt(t_queue_ms=100, t_first_token_ms=300, t_stream_ms=900, t_post_ms=20,
                  attributes={"gen_ai.usage.output_tokens": 101})
    b = f.attempt(t_queue_ms=100, t_first_token_ms=300, t_stream_ms=1800, t_post_ms=20,
                  attributes={"gen_ai.usage.output_tokens": 101})
    pid = send(f.request(a, b, f.stage(a, "tokenize", 120, 30), f.stage(a, "policy", 150, 30), f.stage(b, "network", 130, 60)))
    s = queries.request_shares(Scope(*_window(pid)))
    # totals 1320 and 2220: t_queue shares 100/1320 and 100/2220 -> median = their mean
    assert s["t_queue_share"] == pytest.approx((100 / 1320 + 100 / 2220) / 2)
    # prep: a 60/300 = 0.2, b 0 (none) -> median 0.1; network: a 0, b 60/300 = 0.2 -> 0.1
    assert (s["prep_n"], s["prep_share"], s["network_n"], s["network_share"]) == (1, pytest.approx(0.1), 1, pytest.approx(0.1))
    # 900 / 100 = 9 and 1800 / 100 = 18 ms per output token -> p50 13.5, p95 9 + 0.95 x 9 = 17.55
    assert s["ms_per_output_token_q"] == pytest.approx([13.5, 17.55])
    assert (s["retrieval_n"], s["retrieval_q"]) == (0, [None, None])


def _scheduler_fixture():
    """gw-1 (cap 1): A in flight 0-2 s; B queued 1-2 s behind A (at cap); C queued 3-4 s with nothing in flight.
    gw-2 (cap 2): D queued 0-2 s with nothing in flight. All times from BASE; ms of buckets below."""
    def one(start_ms, t_queue, stream, tenant, cap):
        return f.attempt(t_queue_ms=t_queue, t_first_token_ms=300, t_stream_ms=stream, t_post_ms=100, tenant=tenant,
                         start_ns=_at(start_ms), attributes={"llm.scheduler.cap": cap})
    gw1 = [one(0, 0, 1600, "acme", 1), one(1000, 1000, 600, "globex", 1), one(3000, 1000, 600, "globex", 1)]
    return f.request(*gw1, instance="gw-1"), f.request(one(0, 2000, 600, "acme", 2), instance="gw-2")


def test_scheduler_sweep_gives_backlog_and_gap_per_instance(send):
    pid = send(*_scheduler_fixture())
    rows = queries.scheduler_sweep(Scope(*_window(pid)), bucket_ms=60_000)["instances"]
    per = {r["instance"]: (r["cap"], r["backlog_ms"], r["gap_ms"]) for r in rows}
    # gw-1: backlog [1,2) s at cap (in_flight 1 = cap) + [3,4) s with in_flight 0 -> 2 s, 1 s under cap
    # gw-2: backlog [0,2) s with in_flight 0 < 2 -> 2 s, all under cap
    assert per == {"gw-1": (1, 2000, 1000), "gw-2": (2, 2000, 2000)}
    # pooled: 3 of 4 backlog seconds under cap -> 0.75 (evidence.gap_fraction does the pooling)


def test_a_cap_lowered_mid_window_counts_from_then_on(send):
    def one(start_ms, t_queue, cap):
        return f.attempt(t_queue_ms=t_queue, t_first_token_ms=300, t_stream_ms=600, t_post_ms=100,
                         start_ns=_at(start_ms), attributes={"llm.scheduler.cap": cap})
    # cap 2 until 3 s, then the instance reports cap 1: E in flight 3-4 s, F queued 3.5-4 s behind it
    pid = send(f.request(one(0, 0, 2), one(3000, 0, 1), one(3500, 500, 1), instance="gw-1"))
    [row] = queries.scheduler_sweep(Scope(*_window(pid)), bucket_ms=60_000)["instances"]
    # backlog [3.5, 4) s with in_flight 1 = the current cap 1 -> no gap (a running max of 2 would say 500 ms)
    assert (row["cap"], row["backlog_ms"], row["gap_ms"]) == (1, 500, 0)


def test_the_sweep_covers_the_window_only_with_attempts_queued_before_it(send):
    # gw-1 cap 1: A in flight 0-4 s; B queued at 1 s behind it, admitted at 4 s
    a = f.attempt(t_queue_ms=0, t_first_token_ms=300, t_stream_ms=3600, t_post_ms=100, start_ns=_at(0),
                  attributes={"llm.scheduler.cap": 1})
    b = f.attempt(t_queue_ms=3000, t_first_token_ms=300, t_stream_ms=600, t_post_ms=100, start_ns=_at(1000),
                  attributes={"llm.scheduler.cap": 1})
    pid = send(f.request(a, b, instance="gw-1"))
    window = (pid, SVC, f.BASE + timedelta(seconds=2), f.BASE + timedelta(seconds=3))
    [row] = queries.scheduler_sweep(Scope(*window), bucket_ms=60_000)["instances"]
    # the window [2, 3) s: B waits the whole second with the one slot busy -> 1000 ms backlog, no gap,
    # although both were queued before the window opened
    assert (row["backlog_ms"], row["gap_ms"]) == (1000, 0)


def test_scheduler_series_splits_intervals_at_bucket_edges(send):
    pid = send(*_scheduler_fixture())
    rows = [r for r in queries.scheduler_sweep(Scope(*_window(pid)),
                                               bucket_ms=1000)["instances"] if r["instance"] == "gw-1"]
    second = {int((r["bucket_start"] - f.BASE).total_seconds()): r for r in rows}
    # gw-1 second 1: queue 1 and in_flight 1 all second; second 3: queue 1, in_flight 0; second 4: in flight
    assert (second[1]["queue_ms"], second[1]["in_flight_ms"], second[1]["queue_max"]) == (1000, 1000, 1)
    assert (second[3]["queue_ms"], second[3]["in_flight_ms"], second[3]["gap_ms"]) == (1000, 0, 1000)
    assert (second[4]["queue_ms"], second[4]["in_flight_ms"], second[4]["covered_ms"]) == (0, 1000, 1000)


def test_tenant_in_flight_during_backlog_and_others_queue(send):
    pid = send(*_scheduler_fixture())
    rows = queries.scheduler_sweep(Scope(*_window(pid)), bucket_ms=1000)["tenants"]
    # the only slot busy under backlog: acme's A on gw-1 during [1, 2) s -> 1000 slot-ms; globex none
    assert [(r["tenant"], r["in_flight_backlog_ms"]) for r in rows] == [("acme", 1000), ("globex", 0)]
    # others of acme: globex t_queue 1000, 1000 -> 1000; others of globex: acme 0, 2000 -> 0 + 0.95 x 2000
    assert queries.others_t_queue(Scope(*_window(pid)), ["acme", "globex"]) == {"acme": 1000, "globex": 1900}


def test_churn_windows_per_minute(send):
    pid = send(f.request(f.attempt(t_first_token_ms=300, reused=False, start_ns=_at(1000)),
                         f.attempt(t_first_token_ms=500, reused=False, start_ns=_at(2000)),
                         f.attempt(t_first_token_ms=300, start_ns=_at(61_000)),
                         f.attempt(t_first_token_ms=300, start_ns=_at(62_000))))
    first, second = queries.churn_windows(Scope(*_window(pid)))
    # minute 0: ttft 320, 520 -> p95 320 + 0.95 x 200 = 510; sample stddev sqrt(2 x 100^2 / 1) = 141.42
    assert (first["new_connections"], first["successes"], first["ttft_p95"]) == (2, 2, pytest.approx(510))
    assert first["ttft_stddev"] == pytest.approx(141.421, abs=0.001)
    assert (second["new_connections"], second["successes"], second["ttft_p95"], second["ttft_stddev"]) == (0, 2, 320, 0)


def test_retry_summary_over_runs(send):
    def try_(run, n, start_ms, cause=None):
        attrs = {"llm.run.id": run, "llm.attempt": n, **({"llm.retry.cause": cause} if cause else {})}
        return f.attempt(attributes=attrs, start_ns=_at(start_ms), status_code=ERROR if cause else f.Status.STATUS_CODE_UNSET)
    pid = send(f.request(try_("r1", 1, 0, "timeout"), try_("r1", 2, 2000, "rate_limited"), try_("r1", 3, 5000),
                         try_("r2", 1, 7000), try_("r3", 1, 10_000, "server_error"), try_("r3", 2, 11_000, "server_error")))
    s = queries.retry_summary(Scope(*_window(pid)))
    # runs r1 (3 attempts, ok), r2 (1, ok), r3 (2, failed): (2 + 0 + 1) extra attempts; 4 failed attempts
    assert {k: s[k] for k in ("runs", "successful_runs", "runs_with_retries", "extra_attempts", "attempts",
                               "failed_attempts")} == {"runs": 3, "successful_runs": 2, "runs_with_retries": 2,
                                                       "extra_attempts": 3, "attempts": 6, "failed_attempts": 4}
    # 4 failed attempts x (800 input, 200 output) tokens
    assert (s["wasted_input_tokens"], s["wasted_output_tokens"]) == (3200, 800)
    assert s["causes"] == {"timeout": 1, "rate_limited": 1, "server_error": 2}
    # t_retry over runs: r1 5000 - 0, r2 0, r3 11000 - 10000 -> 0, 1000, 5000: p95 1000 + 0.9 x 4000 = 4600
    assert queries.bucket_distribution(Scope(*_window(pid)))["buckets"]["t_retry"] == pytest.approx(
        {"p50": 1000, "p95": 4600, "p99": 1000 + 0.98 * 4000, "mean": 2000, "count": 3})


def test_tenant_tails_and_successful_runs_per_hour(send):
    pid = send(f.request(*[f.attempt(t_queue_ms=q, tenant="acme") for q in (10, 20, 30)],
                         *[f.attempt(t_queue_ms=q, tenant="globex") for q in (40, 100)]))
    acme, globex = queries.tenant_tails(Scope(*_window(pid)))
    # totals acme 1225 1235 1245 -> p95 1235 + 0.9 x 10 = 1244; globex 1255 1315 -> p95 1255 + 0.95 x 60 = 1312
    assert (acme["tenant"], acme["requests"], acme["total"]["p95"]) == ("acme", 3, pytest.approx(1244))
    assert (globex["tenant"], globex["total"]["p95"], globex["total"]["count"]) == ("globex", pytest.approx(1312), 2)
    assert sum(n for _, n in queries.successful_runs_per_hour(Scope(*_window(pid)))) == 5


def test_bob_sees_none_of_alices_buckets(send, beta):
    send(f.request(f.attempt(), f.attempt(t_queue_ms=400)))
    other, _ = beta
    materialize(other.id, f.BASE - DAY, f.BASE + DAY)
    assert queries.bucket_distribution(Scope(*_window(other.id)))["requests"] == 0
    assert queries.scheduler_sweep(Scope(*_window(other.id)), bucket_ms=1000) == {"instances": [], "tenants": []}
    assert queries.churn_windows(Scope(*_window(other.id))) == []
    assert queries.tenant_tails(Scope(*_window(other.id))) == []


def test_spearman_and_slope_by_hand():
    # ranks 1 2 3 vs 1 3 2: Pearson of ranks = 1 / sqrt(2 x 2) = 0.5
    assert stats.spearman([1, 2, 3], [10, 30, 20]) == pytest.approx(0.5)
    assert stats.spearman([1, 2], [1, 2]) is None  # too few windows
    assert stats.spearman([1, 1, 1], [1, 2, 3]) is None  # no variance
    assert stats.slope([0, 1, 2], [1, 3, 5]) == pytest.approx(2)
    assert stats.series_width_ms(20 * 60_000) == 10_000  # 6 s per point -> 10 s
    assert stats.series_width_ms(24 * 3_600_000) == 600_000  # 432 s -> 10 min


def test_bucket_quantile_per_route_and_for_the_whole_service(send):
    run = {"llm.attempt": 1}  # each attempt a run of its own: t_retry measured
    pid = send(f.request(f.attempt(t_queue_ms=10, route="/a", attributes=run),
                         f.attempt(t_queue_ms=30, route="/a", attributes=run),
                         f.attempt(t_queue_ms=50, route="/b", attributes=run)))
    # /a: 10, 30 -> p50 20; /b: 50; the service: 10 30 50 -> p90 at rank 1.8 -> 30 + 0.8 x 20 = 46
    assert queries.bucket_quantile(Scope(*_window(pid)),
                                   "t_queue", 0.5, group="route") == {"/a": (20, 2), "/b": (50, 1)}
    assert queries.bucket_quantile(Scope(*_window(pid)),
                                   "t_queue", 0.9, group="service") == {"": (pytest.approx(46), 3)}
    # no attempt has a retry wait: a known count of 3, not a missing value (t_retry is 0 on final attempts)
    assert queries.bucket_quantile(Scope(*_window(pid)), "t_retry", 0.5) == {"": (0, 3)}


def test_bucket_quantile_refuses_a_name_outside_the_buckets():
    with pytest.raises(ValueError):
        queries.bucket_quantile(Scope(1, SVC, f.BASE - DAY, f.BASE), "span_id", 0.5)


def test_overview_series_counts_errors_and_leaves_failed_attempts_out_of_the_quantiles(send):
    pid = send(f.request(f.attempt(t_queue_ms=10), f.attempt(t_queue_ms=30), f.attempt(status_code=ERROR)))
    [point] = queries.overview_series(Scope(*_window(pid)), width_ms=3_600_000)
    # successful ttft: 10 + 300 and 30 + 300 -> p50 320
    assert (point["requests"], point["errors"], point["ttft"]["p50"]) == (3, 1, 320)
