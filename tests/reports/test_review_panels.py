"""The weekly review's tenants and retries are the panels' numbers (analysis/panels/): the Tenants page's tails of
the week and the retry summary the retry_rate alert judges."""
import pytest

from analysis.panels import retries, tenants
from analysis.scope import Scope
from reports import build
from reports.weeks import bounds
from tests.reports.conftest import HOSTILE_TENANT, WEEK2


def _service(data, name):
    [s] = [s for s in data["services"] if s["service"] == name]
    return s


def test_the_reviews_tenants_are_the_tenants_panels_tails(weeks):
    week = Scope(weeks.pk, "alpha-svc", *bounds(WEEK2))
    tails = {t.tenant: t for t in tenants.tails(week)}
    reviewed = _service(build.build(weeks, WEEK2), "alpha-svc")["tenants"]
    # the hostile tenant's TTFT 620..700 step 20 (p95 at rank 3.8: 680 + 0.8 x 20 = 696), acme's 610..690 (686)
    assert [(t["tenant"], t["ttft_p95"]) for t in reviewed] == [(HOSTILE_TENANT, pytest.approx(696)),
                                                               ("acme", pytest.approx(686))]
    assert reviewed == [{"tenant": name, "requests": tails[name].count, "ttft_p95": tails[name].ttft_p95,
                         "total_p95": tails[name].total_p95} for name in (HOSTILE_TENANT, "acme")]


def test_the_reviews_retries_are_the_retry_panels(weeks):
    tried = retries.build(Scope(weeks.pk, "retry-svc", *bounds(WEEK2)))
    s = _service(build.build(weeks, WEEK2), "retry-svc")
    # one run of two attempts, the first failed: 1 extra attempt, its 800 input and 200 output tokens wasted
    assert s["retries"] == {"runs": tried.runs, "extra_attempts": tried.extra_attempts,
                            "wasted_input_tokens": tried.wasted_input_tokens,
                            "wasted_output_tokens": tried.wasted_output_tokens} == {
        "runs": 1, "extra_attempts": 1, "wasted_input_tokens": 800, "wasted_output_tokens": 200}
    assert tried.extra_per_run == 1.0
