"""A 2xx means durable: the spool survives ClickHouse outages and process kills, and fills up loudly."""
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ingest.pipeline import get_writer, stop_writer
from store.client import ClickHouseError
from tests import factories as f
from tests.helpers import attempts


@pytest.fixture
def outage(clickhouse):
    """ClickHouse refuses inserts into spans until the fixture ends (the table is renamed away)."""
    clickhouse.command("RENAME TABLE spans TO spans_offline")
    yield
    clickhouse.command("RENAME TABLE spans_offline TO spans")


@pytest.fixture
def fresh_writer():
    """A writer built from the current settings (the process-wide one is replaced, then reset)."""
    stop_writer(drain=False)
    yield
    stop_writer(drain=False)


def _post(client, key, req):
    return client.post("/v1/traces", req.SerializeToString(), content_type="application/x-protobuf",
                       HTTP_AUTHORIZATION=f"Bearer {key}")


def test_spans_acknowledged_during_an_outage_are_stored_after_it(client, alpha, clickhouse, fresh_writer):
    project, key = alpha
    clickhouse.command("RENAME TABLE spans TO spans_offline")
    try:
        assert _post(client, key, f.request(f.attempt(), f.attempt())).status_code == 200
        with pytest.raises(ClickHouseError):
            get_writer().flush(force=True)
        assert get_writer().spool.backlog()[0] == 1  # the segment stays on disk
    finally:
        clickhouse.command("RENAME TABLE spans_offline TO spans")
    get_writer().flush(force=True)
    assert len(attempts(project.id)) == 2
    assert get_writer().spool.backlog() == (0, 0)


def test_full_spool_answers_503_with_retry_after(client, alpha, settings, outage, fresh_writer):
    _, key = alpha
    settings.INGEST_SPOOL_MAX_BYTES = 3000
    settings.INGEST_SEGMENT_SPANS = 1
    settings.INGEST_RETRY_AFTER_SECONDS = 7
    settings.INGEST_PROJECT_SPOOL_SHARE = 1.0  # one project may fill it all: the whole spool's limit is tested
    statuses = [_post(client, key, f.request(f.attempt(), f.attempt())).status_code for _ in range(6)]
    # each request is ~1 KB on disk, so the spool refuses once about 3 are waiting
    assert statuses[0] == 200 and statuses[-1] == 503
    response = _post(client, key, f.request(f.attempt(), f.attempt()))
    assert response.status_code == 503
    assert response["Retry-After"] == "7"
    assert response["X-Latency-Obs-Reason"] == "spool_full"


def test_spool_accepts_again_once_clickhouse_is_back(client, alpha, clickhouse, settings, fresh_writer):
    project, key = alpha
    settings.INGEST_SPOOL_MAX_BYTES = 3000
    clickhouse.command("RENAME TABLE spans TO spans_offline")
    try:
        while _post(client, key, f.request(f.attempt())).status_code == 200:
            pass
    finally:
        clickhouse.command("RENAME TABLE spans_offline TO spans")
    get_writer().flush(force=True)
    response = _post(client, key, f.request(f.attempt()))
    assert response.status_code == 200
    assert not ExportTraceServiceResponse.FromString(response.content).HasField("partial_success")
    stored = len(attempts(project.id))
    get_writer().flush(force=True)
    assert len(attempts(project.id)) == stored + 1
