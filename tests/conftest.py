import itertools
from collections import Counter

import pytest

from tests import factories

pytest_plugins = ["tests.cpu_time"]  # --cpu-top N (tests/cpu_time.py)

# Seconds a file's tests take in all on the 2-core machine, for the files that take 15 s or more (make test, 2026-11-29,
# per-test start and end times of each worker). pytest-xdist's --dist loadfile hands a worker a whole file at a time,
# by default in order of test count (--loadscope-reorder): one-test files came last, so the single 4-minute test of a
# running `up` started when the other worker had little left to do. pytest.ini turns that order off
# (--no-loadscope-reorder) and pytest_collection_modifyitems below puts these files first, longest first (the short
# files fill in at the end), then the others by test count, as xdist did. The files of few tests that wait on a
# subprocess (`up`, serve_*, the banner's exporters) are here too: by test count they came last, where one worker
# waited on them for the run's last 35 s while the others had nothing left (0.4-0.9 of the 2 cores busy).
HEAVY_FILES = {  # the order only
    "tests/analysis/test_incidents_as_run.py": 446,  # in the client tests' lane after them (Makefile: AS_RUN_TESTS)
    "tests/analysis/test_incident_accuracy.py": 165,
    "tests/simulator/test_layers_diagnosed.py": 122,
    "tests/ingest/test_crash_recovery.py": 96,
    "tests/ingest/test_fuzz.py": 89,
    "tests/analysis/test_incident_layers.py": 88,
    "tests/browser/test_pages.py": 76,
    "tests/analysis/test_aggregates.py": 69,
    "tests/analysis/test_presets_diagnosed.py": 62,
    "tests/analysis/test_incident_explain.py": 54,
    "tests/analysis/test_sketches.py": 54,
    "tests/analysis/test_incident_detection.py": 54,
    "tests/analysis/test_incident_series.py": 46,
    "tests/latency_obs/test_up.py": 42,
    "tests/dashboard/test_freshness.py": 31,
    "tests/analysis/test_engine_presets.py": 30,
    "tests/analysis/test_evidence.py": 28,
    "tests/analysis/test_scheduler_minutes.py": 27,
    "tests/ingest/test_receive_tier.py": 27,
    "tests/latency_obs/test_newcomer.py": 23,
    "tests/dashboard/test_isolation.py": 23,
    "tests/analysis/test_capacity_simulated.py": 22,
    "tests/simulator/test_engine_metrics.py": 21,
    "tests/analysis/test_materialize.py": 20,
    "tests/browser/test_incident_page.py": 20,
    "tests/latency_obs/test_banner.py": 19,
    "tests/dashboard/test_read_ahead.py": 19,
    "tests/latency_obs/test_ports.py": 16,
    "tests/ingest/test_serve_otlp_grpc.py": 13,
    "tests/latency_obs/test_isolation_of_work.py": 13,
    # the client tests' own lane (Makefile): litellm 273, sdks 161, layers_propagated 92, instrumentations 45
    "tests/clients/test_litellm.py": 273,
    "tests/clients/test_sdks.py": 161,
    "tests/clients/test_layers_propagated.py": 92,
    "tests/clients/test_instrumentations.py": 45,
}

# Files whose tests take 0.8 s or more each on average (make test-fast with --junitxml, 2026-11-28, the 2-core machine:
# they ingest and materialize, render pages over stored traffic, build reviews or run the minute jobs): marked slow
# below, so that `make test-fast` stays the inner loop of the quick tests (2 minutes); `make test` runs all of them.
# A file that grows past the bar belongs here (seconds a test, the order only).
SLOW_FILES = {
    "tests/latency_obs/test_isolation_of_work.py": 12.3,
    "tests/analysis/test_materialize_inputs.py": 4.0,
    "tests/dashboard/test_read_ahead.py": 2.9,
    "tests/reports/test_slos_review.py": 2.7,
    "tests/reports/test_views_and_sending.py": 2.6,
    "tests/reports/test_review_panels.py": 2.6,
    "tests/reports/test_incidents_review.py": 2.5,
    "tests/dashboard/test_logical_counts.py": 2.4,
    "tests/reports/test_build.py": 2.3,
    "tests/store/test_query_timeout.py": 2.1,
    "tests/reports/test_capacity_review.py": 2.1,
    "tests/analysis/test_versions.py": 1.9,
    "tests/analysis/test_backlog.py": 1.9,
    "tests/ingest/test_fuzz.py": 1.8,
    "tests/dashboard/test_freshness.py": 1.7,
    "tests/analysis/test_tasks.py": 1.7,
    "tests/latency_obs/test_pipeline.py": 1.6,
    "tests/dashboard/test_cardinality.py": 1.6,
    "tests/analysis/test_api_store_errors.py": 1.5,
    "tests/analysis/test_layers.py": 1.5,
    "tests/analysis/test_stream_hints.py": 1.4,
    "tests/dashboard/test_diagnosis_page.py": 1.3,
    "tests/analysis/test_incident_series.py": 1.2,
    "tests/analysis/test_materialize.py": 1.2,
    "tests/analysis/test_capacity_api.py": 1.2,
    "tests/analysis/test_cost_per_success.py": 1.2,
    "tests/analysis/test_incident_explain.py": 1.2,
    "tests/dashboard/test_tenants_page.py": 1.2,
    "tests/ingest/test_writer_bisection.py": 1.2,
    "tests/analysis/test_materialize_logs.py": 1.1,
    "tests/analysis/test_lookups.py": 1.1,
    "tests/dashboard/test_service_map_page.py": 1.1,
    "tests/alerts/test_slo_burn.py": 1.1,
    "tests/dashboard/test_coverage_strip.py": 1.1,
    "tests/slos/test_status.py": 1.1,
    "tests/dashboard/test_scheduler_page.py": 1.1,
    "tests/alerts/test_kinds_panels.py": 1.1,
    "tests/analysis/test_scheduler_minutes.py": 1.0,
    "tests/dashboard/test_capacity_page.py": 1.0,
    "tests/analysis/test_materialize_http_tries.py": 1.0,
    "tests/dashboard/test_isolation.py": 1.0,
    "tests/analysis/test_coverage.py": 1.0,
    "tests/alerts/test_rules.py": 1.0,
    "tests/analysis/test_bounded_lists.py": 1.0,
    "tests/analysis/test_queries.py": 0.9,
    "tests/analysis/test_capacity_command.py": 0.9,
    "tests/dashboard/test_connections_page.py": 0.9,
    "tests/dashboard/test_prompts_page.py": 0.8,
    "tests/simulator/test_traffic_cache.py": 0.8,
    "tests/simulator/test_incidents.py": 0.8,
}


# after pytest-django's sort by test kind (tryfirst), before the mark plugin deselects -m "not slow" (a plain hook: a
# conftest's plain hook runs before the plugins' registered earlier)
def pytest_collection_modifyitems(config, items):
    """SLOW_FILES marked slow; the longest files first (HEAVY_FILES), then the others by test count; a file's own
    order is kept."""
    for item in items:
        if item.nodeid.split("::")[0] in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
    files = Counter(item.nodeid.split("::")[0] for item in items)
    items.sort(key=lambda item: (-HEAVY_FILES.get(name := item.nodeid.split("::")[0], 0), -files[name], name))


@pytest.fixture(autouse=True)
def span_clock():
    """Every test's spans start at factories.BASE again (one second apart, in order of creation).

    TRICKY: the sequence was process-wide, so a test that built 20,000 spans moved the default start of every
    later test's spans in the same xdist worker hours past BASE, out of the windows those tests read.
    """
    factories._seq = itertools.count(1)


@pytest.fixture(autouse=True, scope="session")
def aggregate_in_one_chunk():
    """materialize() aggregates a window's settled hours CHUNK_HOURS at a time, a statement per aggregate table and
    chunk, to bound a backfill's memory (analysis/rollups/aggregates.py: chunks change nothing but that). The tests'
    windows are a day or two of a few spans, where the fixed cost of each statement is all: one chunk of a week
    (a factories window, BASE +- a day, took 4-5 s of 13 x 8 statements, 1 s of 13 x 1; probe on this machine).
    tests/analysis/test_aggregates.py's chunked refresh checks the product's own CHUNK_HOURS."""
    from analysis.rollups import aggregates

    chunk = aggregates.CHUNK_HOURS
    aggregates.CHUNK_HOURS = 24 * 7
    yield
    aggregates.CHUNK_HOURS = chunk


@pytest.fixture(scope="session")
def clickhouse_schema(django_db_blocker):
    """Migrate this worker's chDB store once (the real migrations)."""
    from store.migrate import migrate

    migrate()


@pytest.fixture
def clickhouse(clickhouse_schema):
    """The ClickHouse client module, with every table emptied for this test."""
    from django.core.cache import caches

    from ingest.pipeline import flush_started_writers
    from store import client
    from tests.stored import empty_store

    flush_started_writers()  # an earlier test's spooled batches land now, not in this test's tables
    empty_store()
    # answers kept about the store (analysis/reads/versions.py) and freshness marks go with its rows
    for kept in caches.all():
        kept.clear()
    return client


@pytest.fixture
def alpha(db):
    """Project alpha with its keys: (project, ingest+read key)."""
    from projects.models import ApiKey, Project

    project = Project.objects.create(name="alpha")
    _, raw = ApiKey.issue(project, ["ingest", "read"])
    return project, raw


@pytest.fixture
def beta(db):
    from projects.models import ApiKey, Project

    project = Project.objects.create(name="beta")
    _, raw = ApiKey.issue(project, ["ingest", "read"])
    return project, raw


@pytest.fixture
def ingest(clickhouse):
    """ingest(key, *requests): through the real decode -> spool -> writer path, then flushed."""
    from ingest.pipeline import export, get_writer

    def send(key, *requests, encoding="protobuf"):
        results = [export(f"Bearer {key}", r.SerializeToString(), encoding) for r in requests]
        get_writer().flush(force=True)
        return results

    return send


@pytest.fixture
def receiver():
    """A real HTTP server on 127.0.0.1 that records webhook POSTs (tests/alerts/receiver.py)."""
    from tests.alerts.receiver import Receiver

    r = Receiver()
    r.thread.start()
    yield r
    r.server.shutdown()
    r.server.server_close()


@pytest.fixture
def eager():
    """Celery tasks queued by the code under test run in this thread (the test's transaction), retries included."""
    from latency_obs.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture(scope="module")
def fewer_gc_passes():
    """Python's cyclic garbage collector run about 70x less often for a module's tests (restored after it).

    The simulated-traffic tests make hundreds of thousands of short-lived objects a minute (a span and its events and
    attributes through the OTel SDK, then their decoding at ingest): at the default threshold (700 allocations) the
    collector ran so often over the process's large heap that it took about a fifth of the time of generating an
    incident's 40 minutes (9.0 -> 7.2 s, 117k spans; 50,000 allocations: 20-40 MB more at the peak). What a test
    computes does not change: only when unreachable cycles are freed."""
    import gc

    before = gc.get_threshold()
    gc.set_threshold(50_000, 20, 10)
    yield
    gc.set_threshold(*before)
