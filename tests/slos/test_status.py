"""analysis.reads.slos.status on factory traffic through the real ingest and materialize, against the truth worked out from
what was sent (tests/slos/traffic.py): compliance, error budget, what is not measured, the burn-down and the burn
rates; the settled hours' counts kept in the cache until late spans change the hour."""
from datetime import timedelta
from types import SimpleNamespace

import pytest

from analysis.reads import slos
from analysis.reads.slo_counts import Counts
from analysis.wording import fmt
from tests import factories as f
from tests import stored
from tests.slos.traffic import Sent, mixed, send, truth

NOW = f.BASE + timedelta(hours=6)
SHARES = {"fast": 0.80, "slow": 0.08, "failed": 0.04, "unstreamed": 0.08}


def slo(project, **kw):
    fields = {"project_id": project.pk, "service": "llm-gateway", "route": "", "tenant": "", "signal": "ttft",
              "threshold_ms": 1000.0, "objective": 0.99, "window_days": 7, **kw}
    return SimpleNamespace(**fields)


@pytest.fixture
def traffic(alpha, ingest):
    project, key = alpha
    sent = mixed(f.BASE, 6, 400, SHARES, seed=36)
    stored.once("slo_status_traffic", (project,), lambda: send(ingest, key, project, sent))  # once per worker
    return project, key, sent


def test_compliance_and_budget_are_exact_to_what_was_sent(traffic):
    project, _, sent = traffic
    status = slos.status(slo(project), NOW)
    expected = truth(sent, "ttft", 1000.0, NOW - timedelta(days=7), NOW)
    assert status.counts == expected and expected.requests == 400 and expected.bad > 0 and expected.unmeasured > 0
    assert status.compliance == pytest.approx(expected.good / expected.measured, rel=1e-12)
    # allowed = 1 % of the measured requests; remaining = 1 - bad / allowed (negative: overspent)
    assert status.budget_remaining == pytest.approx(1 - expected.bad / (0.01 * expected.measured), rel=1e-12)
    assert status.unmeasured_share == pytest.approx(expected.unmeasured / 400, rel=1e-12)
    assert slos.not_measured_text(status) == f"not measured for {fmt(expected.unmeasured / 400, '%')} of requests"
    assert (status.start, status.end) == (NOW - timedelta(days=7), NOW)


def test_unmeasured_requests_are_neither_good_nor_bad_and_total_measures_them(traffic):
    project, _, sent = traffic
    ttft, total = slos.status(slo(project), NOW), slos.status(slo(project, signal="total", threshold_ms=2000.0), NOW)
    unstreamed = sum(s.kind == "unstreamed" for s in sent)
    assert ttft.counts.unmeasured == unstreamed and ttft.counts.measured == 400 - unstreamed
    # total is measured for every attempt: the GenAI spans' 1.8 s is good under 2 s, slow (2,435 ms) is bad
    assert total.counts == truth(sent, "total", 2000.0, NOW - timedelta(days=7), NOW)
    assert total.counts.unmeasured == 0 and slos.not_measured_text(total) == ""
    slow_or_failed = sum(s.kind in ("slow", "failed") for s in sent)
    assert total.counts.bad == slow_or_failed and ttft.counts.bad == slow_or_failed


def test_route_and_tenant_narrow_the_requests(traffic):
    project, _, sent = traffic
    window = (NOW - timedelta(days=7), NOW)
    on_route = slos.status(slo(project, route="/v1/summarize"), NOW)
    of_tenant = slos.status(slo(project, tenant="globex"), NOW)
    assert on_route.counts == truth(sent, "ttft", 1000.0, *window, route="/v1/summarize")
    assert of_tenant.counts == truth(sent, "ttft", 1000.0, *window, tenant="globex")
    assert 0 < on_route.counts.requests < 400 and 0 < of_tenant.counts.requests < 400


def test_burn_down_ends_at_the_budget_remaining_and_steps_at_each_bad_hour(traffic):
    project, _, sent = traffic
    status = slos.status(slo(project), NOW)
    points = status.burn_down
    # 7 days ending on a whole hour: one point at the end of each of its 168 hours
    assert len(points) == 168 and points[-1] == (NOW, status.budget_remaining)
    allowed = 0.01 * status.counts.measured
    for hours_back in range(1, 7):
        at = NOW - timedelta(hours=hours_back)
        bad_before = truth(sent, "ttft", 1000.0, NOW - timedelta(days=7), at).bad
        assert dict(points)[at] == pytest.approx(1 - bad_before / allowed, rel=1e-12)
    assert all(value == 1 for at, value in points if at <= f.BASE)  # nothing spent before the traffic


def test_burn_rates_are_the_bad_share_over_the_allowed_share_per_window(traffic):
    project, _, sent = traffic
    burn = slos.status(slo(project), NOW).burn
    for name, length in slos.BURN_WINDOWS.items():
        counts = truth(sent, "ttft", 1000.0, NOW - length, NOW)
        expected = counts.bad / counts.measured / 0.01 if counts.measured else None
        assert burn.rates[name] == pytest.approx(expected, rel=1e-9), name
        assert burn.measured[name] == counts.measured


def test_no_requests_is_not_measured_never_a_kept_promise(alpha, clickhouse):
    status = slos.status(slo(alpha[0]), NOW)
    assert status.counts == Counts()
    assert (status.compliance, status.budget_remaining, status.unmeasured_share) == (None, None, None)
    assert set(status.burn.rates.values()) == {None} and status.burn.paging == ()
    assert fmt(status.compliance, "nines") == "not measured"


def test_settled_hours_come_from_the_cache_until_late_spans_change_them(traffic, ingest):
    project, key, sent = traffic
    first = slos.status(slo(project), NOW)
    assert slos.status(slo(project), NOW).counts == first.counts  # warm: the same numbers
    # a late slow span in the second hour: materialized again, that hour has a new version and is read again
    late = [Sent(f.BASE + timedelta(hours=1, minutes=30), "slow")]
    send(ingest, key, project, late)
    again = slos.status(slo(project), NOW)
    assert again.counts == truth(sent + late, "ttft", 1000.0, NOW - timedelta(days=7), NOW)
    assert again.counts.bad == first.counts.bad + 1


def test_exactly_at_the_threshold_is_bad(alpha, ingest):
    project, key = alpha
    send(ingest, key, project, [Sent(f.BASE + timedelta(minutes=m), "fast") for m in range(4)])
    # fast TTFT is 320 ms: a 320 ms threshold ("TTFT < 320 ms") makes each of them bad, 320.001 good
    assert slos.status(slo(project, threshold_ms=320.0), NOW).counts == Counts(0, 4, 0)
    assert slos.status(slo(project, threshold_ms=320.001), NOW).counts == Counts(4, 0, 0)
