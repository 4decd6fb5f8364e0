"""One project's backlog fills its share of the spool, not everyone's: it gets 429, the others go on."""
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ingest import faults
from ingest.pipeline import get_writer
from tests import factories as f
from tests.helpers import spans


def _post(client, key, spans_in_request=50):
    body = f.request(*(f.attempt() for _ in range(spans_in_request))).SerializeToString()
    return client.post("/v1/traces", body, content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {key}")


def test_a_project_over_its_spool_share_gets_429_and_another_is_untouched(client, alpha, beta, clickhouse, settings,
                                                                          monkeypatch):
    (alpha, key_a), (beta, key_b) = alpha, beta
    spool = get_writer().spool
    settings.INGEST_SPOOL_MAX_BYTES = 1 << 20
    monkeypatch.setattr(spool, "max_bytes", 1 << 20)
    alpha.ingest_spool_share = 0.25  # 256 KiB of the 1 MiB spool
    alpha.save()
    # the counts are this process's since it started, by project id: an earlier test's project of the same id may
    # have had spans refused (seen with the fast tests in one process)
    before = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {key_a}").json()["throttled"]
    faults.set_inserts_fail(120)  # ClickHouse "down": nothing leaves the spool
    try:
        answers = [_post(client, key_a) for _ in range(40)]  # ~20 KB each: alpha's share ends after ~12
        codes = [r.status_code for r in answers]
        assert 200 in codes and codes[-1] == 429
        refused = answers[codes.index(429)]
        assert (refused["X-Latency-Obs-Reason"], int(refused["Retry-After"])) == ("spool_quota", settings.INGEST_RETRY_AFTER_SECONDS)
        assert spool.project_bytes(alpha.id) <= (1 << 20) // 4
        assert _post(client, key_b).status_code == 200  # beta has the rest of the spool
        status = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {key_a}").json()
        assert status["throttled"]["spool_quota"] - before["spool_quota"] == 50 * codes.count(429)
    finally:
        faults.clear()
    get_writer().flush(force=True)
    # every acknowledged span of alpha landed: 50 per 200
    assert len(spans(alpha.id, columns="span_id")) == 50 * codes.count(200)
    assert len(spans(beta.id, columns="span_id")) == 50
    ExportTraceServiceResponse.FromString(answers[0].content)  # the 200s were plain successes
