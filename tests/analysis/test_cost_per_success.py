"""cost_per_success = C_hour / R_success (seed 002), with C_hour set per service."""
from datetime import timedelta
from decimal import Decimal

from analysis.diagnosis.service import run_diagnosis
from analysis.models import ServiceCost
from analysis.rollups.materialize import materialize
from analysis.scope import Scope
from tests import factories as f


def _three_successes_and_a_failure(alpha, ingest):
    project, key = alpha
    spans = [f.attempt(start_ns=f.BASE_NS + i * 60_000 * f.MS) for i in range(3)]
    failed = f.attempt(start_ns=f.BASE_NS + 240_000 * f.MS, status_code=2)  # STATUS_CODE_ERROR: not a success
    ingest(key, f.request(*spans, failed))
    materialize(project.id, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=1))
    return project


def test_cost_per_success_divides_the_hourly_cost_by_successes_per_hour(alpha, ingest):
    project = _three_successes_and_a_failure(alpha, ingest)
    ServiceCost.objects.create(project=project, service="llm-gateway", cost_per_hour_usd=Decimal("36"))
    # window of 30 minutes holding 3 successful runs (the failed one is a run without success):
    # R_success = 3 / 0.5 h = 6 per hour -> 36 USD / 6 = 6 USD per success
    result = run_diagnosis(Scope(project.id, "llm-gateway", f.BASE - timedelta(minutes=10), f.BASE + timedelta(minutes=20)))
    assert result["evidence"]["successful_runs_per_hour"] == 6
    assert result["evidence"]["cost_per_success_usd"] == 6


def test_cost_per_success_is_unknown_without_a_configured_cost(alpha, ingest):
    project = _three_successes_and_a_failure(alpha, ingest)
    result = run_diagnosis(Scope(project.id, "llm-gateway", f.BASE - timedelta(minutes=10), f.BASE + timedelta(minutes=20)))
    assert result["evidence"]["cost_per_success_usd"] is None
