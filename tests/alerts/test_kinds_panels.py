"""The alert kinds read their numbers through the panels (analysis/panels/): for one scope, a percentile, retry_rate
or tenant_tail rule measures what the Overview, the retry summary and the Tenants page give."""
from datetime import timedelta

import pytest

from alerts import rules
from alerts.models import AlertRule
from analysis.panels import overview, retries, tenants
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests import factories as f

SVC = "llm-gateway"
W = (f.BASE, f.BASE + timedelta(minutes=15))


@pytest.fixture
def scope(alpha, ingest):
    """8 runs one second apart: run i on route /a (i even) or /b, tenant "slow" (i < 4) or "quick", its final
    attempt's t_first_token 300 + 100 i ms (TTFT = 20 + that, total = 1235 + 100 i); runs 0 and 1 tried twice, a
    failed try first (TTFT 320, total 1235). Materialized; the Scope of the service over W."""
    project, key = alpha
    spans = []
    for i in range(8):
        at, run = f.BASE_NS + i * 1000 * f.MS, {"llm.run.id": f"run-{i}"}
        where = {"route": "/a" if i % 2 == 0 else "/b", "tenant": "slow" if i < 4 else "quick"}
        if i < 2:
            spans.append(f.attempt(attributes={**run, "llm.attempt": 1}, start_ns=at, **where,
                                   status_code=f.Status.STATUS_CODE_ERROR))
        spans.append(f.attempt(attributes={**run, "llm.attempt": 2 if i < 2 else 1}, start_ns=at + 500 * f.MS,
                               t_first_token_ms=300 + 100 * i, **where))
    ingest(key, f.request(*spans, service=SVC))
    materialize(project.pk, W[0] - timedelta(hours=1), W[1] + timedelta(hours=1))
    return Scope(project.pk, SVC, *W)


def _rule(project, **kw):
    fields = {"name": "r", "kind": AlertRule.PERCENTILE, "service": SVC, "bucket": "ttft", "percentile": 95,
              "threshold": 1, "min_requests": 1, "for_seconds": 0, **kw}
    return AlertRule.objects.create(project=project, **fields)


def test_percentile_rule_measures_the_overviews_percentile(alpha, scope):
    rule = _rule(alpha[0])
    head = overview.headline(scope)
    # TTFT of the 10 attempts: 320 320 320 420 .. 1020; p95 at rank 0.95 x 9 = 8.55 of 0..9: 920 + 0.55 x 100 = 975
    assert head.buckets["ttft"]["p95"] == pytest.approx(975)
    assert rules.measure(rule, *W) == {"": (pytest.approx(975), 10)} == {"": (head.buckets["ttft"]["p95"],
                                                                                head.requests)}
    assert overview.quantile(scope, "ttft", 95) == {"": overview.Quantile(value_ms=pytest.approx(975), requests=10)}


def test_percentile_rule_per_route_is_the_overviews_per_route_p95(alpha, scope):
    rule = _rule(alpha[0], bucket="total", group_by="route")
    by_route = {r["value"]: (r["buckets"]["total"]["p95"], r["requests"]) for r in overview.build(scope).by_route}
    # /a: totals 1235 (run 0's failed try) 1235 1435 1635 1835, p95 at rank 0.95 x 4 = 3.8: 1635 + 0.8 x 200 = 1795;
    # /b: 1235 (run 1's failed try) 1335 1535 1735 1935: 1735 + 0.8 x 200 = 1895
    assert by_route == {"/a": (pytest.approx(1795), 5), "/b": (pytest.approx(1895), 5)}
    assert rules.measure(rule, *W) == by_route


def test_retry_rate_rule_measures_the_retry_panel(alpha, scope):
    # 2 extra attempts over 8 runs: 0.25 per run; per tenant: slow 2 of 4 runs, quick none of 4
    assert retries.build(scope).extra_per_run == 0.25
    assert rules.measure(_rule(alpha[0], kind=AlertRule.RETRY_RATE), *W) == {"": (0.25, 8)}
    per_tenant = rules.measure(_rule(alpha[0], kind=AlertRule.RETRY_RATE, group_by="tenant"), *W)
    assert per_tenant == {"slow": (0.5, 4), "quick": (0.0, 4)}
    assert per_tenant == {k: (r.extra_per_run, r.runs) for k, r in retries.per_group(scope, "tenant").items()}


def test_tenant_tail_rule_measures_the_tenants_pages_tails(alpha, scope):
    rule = _rule(alpha[0], kind=AlertRule.TENANT_TAIL, group_by="tenant")
    page = {r["tenant"]: (r["ttft_p95"], r["requests"]) for r in tenants.build(scope, noisy=False).rows}
    # slow: TTFT 320 320 320 420 520 620 (p95 at rank 0.95 x 5 = 4.75: 520 + 0.75 x 100 = 595);
    # quick: 720 820 920 1020 (rank 2.85: 920 + 0.85 x 100 = 1005)
    assert page == {"slow": (pytest.approx(595), 6), "quick": (pytest.approx(1005), 4)}
    assert rules.measure(rule, *W) == page
    assert {t.tenant: (t.ttft_p95, t.count) for t in tenants.tails(scope)} == page
