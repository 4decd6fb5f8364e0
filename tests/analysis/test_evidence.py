"""analysis.evidence.collect: the evidence dict on a hand-worked fixture and on simulated presets."""
import json
from datetime import datetime, timedelta, timezone
from io import StringIO

import pytest
from django.core.management import call_command

from analysis.evidence import collect
from analysis.materialize import materialize
from ingest.pipeline import get_writer
from tests import factories as f
from tests.analysis.test_queries import _scheduler_fixture

DAY = timedelta(days=1)
SVC = "llm-gateway"


@pytest.fixture
def buckets(clickhouse):
    clickhouse.command("TRUNCATE TABLE IF EXISTS request_buckets")
    return clickhouse


def test_collect_pools_gap_fraction_over_instances(alice, ingest, buckets):
    project, key = alice
    ingest(key, *_scheduler_fixture())
    materialize(project.id, f.BASE - DAY, f.BASE + DAY)
    ev = collect(project.id, SVC, f.BASE - timedelta(hours=1), f.BASE + timedelta(hours=1))
    json.dumps(ev)  # JSON-ready as it is
    # gw-1: 1 of 2 backlog seconds under cap -> 0.5; gw-2: 2 of 2 -> 1.0; pooled 3 of 4 -> 0.75
    assert ev["gap_fraction"] == {"service": 0.75, "backlog_seconds": 4.0, "instances": {
        "gw-1": {"gap_fraction": 0.5, "backlog_seconds": 2.0, "cap": 1},
        "gw-2": {"gap_fraction": 1.0, "backlog_seconds": 2.0, "cap": 2}}}
    # t_queue 0, 1000, 1000, 2000 -> p50 1000, p95 1000 + 0.85 x 1000 = 1850
    assert (ev["requests"], ev["buckets"]["t_queue"]["p50"], ev["buckets"]["t_queue"]["p95"]) == (4, 1000, pytest.approx(1850))
    # totals 2000, 2000, 2000, 3000 -> p95 2000 + 0.85 x 1000 = 2850; 1850 / 2850
    assert ev["dominance"]["t_queue"]["p95_share"] == pytest.approx(1850 / 2850)
    assert [(n["tenant"], n["in_flight_share_during_backlog"], n["others_t_queue_p95"]) for n in ev["noisy_neighbours"]] == [
        ("acme", 1.0, 1000), ("globex", 0.0, 1900)]
    assert (ev["success_rate"], ev["retries"]["rate"], ev["retries"]["causes"]) == (1.0, 0.0, {})
    assert ev["successful_runs_per_hour"] == 2.0  # 4 runs over 2 hours
    assert ev["stages"]["prep_share_of_first_token"] is None  # no stage spans: unknown, not 0


def test_collect_on_an_empty_window_says_unknown_not_zero(alice, bob, ingest, buckets):
    project, key = alice
    ingest(key, f.request(f.attempt()))
    materialize(project.id, f.BASE - DAY, f.BASE + DAY)
    other, _ = bob
    ev = collect(other.id, SVC, f.BASE - DAY, f.BASE + DAY)  # bob sees none of alice's requests
    json.dumps(ev)
    assert ev["requests"] == 0 and ev["gap_fraction"]["service"] is None and ev["success_rate"] is None
    assert ev["buckets"]["total"]["p50"] is None and ev["churn"]["new_connections_per_success"] is None
    assert ev["decode"]["ms_per_output_token_p50"] is None and ev["retries"]["rate"] is None


def _simulate(live_server, project, key, scenario):
    """20 simulated minutes of a preset sent over HTTP, materialized; returns collect() over them."""
    call_command("simulate", scenario=scenario, duration="20m", endpoint=f"{live_server.url}/v1/traces",
                 key=key, seed=7, stdout=StringIO())
    get_writer().flush(force=True)
    now = datetime.now(timezone.utc)  # the simulated time ended at (about) now
    materialize(project.id, now - timedelta(hours=1), now + timedelta(minutes=10))
    return collect(project.id, SVC, now - timedelta(minutes=30), now + timedelta(minutes=10))


@pytest.mark.slow
def test_admission_gap_shows_idle_slots_under_backlog(live_server, alice, buckets):
    project, key = alice
    ev = _simulate(live_server, project, key, "admission_gap")
    assert ev["requests"] > 1000
    assert ev["gap_fraction"]["service"] > 0.5


@pytest.mark.slow
def test_queue_backlog_keeps_slots_busy_under_backlog(live_server, alice, buckets):
    project, key = alice
    ev = _simulate(live_server, project, key, "queue_backlog")
    assert ev["gap_fraction"]["backlog_seconds"] > 60
    assert ev["gap_fraction"]["service"] < 0.2
