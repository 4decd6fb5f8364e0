"""An SLO is the capacity worksheet's objective before a budget: "99 % TTFT < 1 s" is TTFT p99 under 1 s; the route's
own SLO first, TTFT before total, a tenant's never; and how the page writes objectives and compliance ("nines")."""
import pytest

from analysis.capacity.objectives import objective
from analysis.wording import fmt
from budgets.models import Budget
from slos.models import Slo


def make(project, **kw):
    fields = {"service": "chat", "signal": "ttft", "threshold_ms": 1000, "objective": 0.99, **kw}
    return Slo.objects.create(project=project, **fields)


def test_the_services_slo_is_the_objective_before_its_budget(alpha):
    project = alpha[0]
    Budget.objects.create(project=project, service="chat", total_ms=2500)
    assert objective(project.pk, "chat").source == "latency budget"
    make(project, signal="total", threshold_ms=3000)
    make(project, tenant="acme", threshold_ms=10)  # one tenant's promise is not the service's
    found = objective(project.pk, "chat")
    assert (found.metric, found.percentile, found.threshold_ms, found.source) == ("total", 99, 3000, "SLO")
    make(project, objective=0.999, threshold_ms=800)
    found = objective(project.pk, "chat")
    assert (found.metric, found.percentile, found.threshold_ms) == ("ttft", 99, 800)  # 99.9 % -> p99
    assert found.text() == "TTFT p99 under 800 ms (SLO 'chat: 99.9% TTFT < 800 ms (28 days)')"
    make(project, route="/v1/a", objective=0.95, threshold_ms=500)
    assert objective(project.pk, "chat", "/v1/a").percentile == 95
    assert objective(project.pk, "other").source == "diagnosis threshold"


@pytest.mark.parametrize("share, text", [(0.99, "99%"), (0.999, "99.9%"), (0.9995, "99.95%"), (0.99999, "99.999%"),
                                         (0.99996, "99.996%"), (0.9999999, "99.999%"), (1.0, "100%"), (0.29, "29%"),
                                         (None, "not measured")])
def test_nines_are_truncated_never_rounded_up_to_a_kept_promise(share, text):
    assert fmt(share, "nines") == text
