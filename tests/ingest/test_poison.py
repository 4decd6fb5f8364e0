"""One hostile span or segment must never stop ingest for everyone (accepted spans still land)."""
import json
import math

from google.rpc.status_pb2 import Status

from ingest.otlp_proto import frame, spool_record
from ingest.pipeline import get_writer
from ingest import quarantine
from ingest.spool import QUARANTINE, Spool
from tests import factories as f
from tests.helpers import attempts


def _post(client, key, body, content_type="application/x-protobuf"):
    return client.post("/v1/traces", body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}")


def test_non_finite_latency_attributes_leave_the_instant_unknown(client, alpha, clickhouse):
    project, key = alpha
    bad = f.span(name="llm_request", attributes={"gen_ai.latency.e2e": math.inf, "gen_ai.latency.time_to_first_token": math.nan,
                                                 "gen_ai.latency.time_in_queue": 1e300, "llm.attempt": math.inf})
    assert _post(client, key, f.request(bad, f.attempt()).SerializeToString()).status_code == 200
    get_writer().flush(force=True)
    rows = attempts(project.id, order="form")
    # both stored: the vLLM-form span with its instants unknown (NULL), attempt number back to 1
    assert [r["form"] for r in rows] == ["native", "vllm"]
    vllm = rows[1]
    assert (vllm["admitted_at"], vllm["first_token_at"], vllm["last_token_at"], vllm["attempt"]) == (None, None, None, 1)


def test_a_known_field_with_the_wrong_wire_type_is_dropped_not_passed_on(client, alpha, clickhouse):
    project, key = alpha
    good = f.request(f.attempt()).SerializeToString()
    # Span.name (field 5) sent as a varint: Python sees an unknown field, ClickHouse's parser would choke
    odd_span = f.attempt()
    raw = odd_span.SerializeToString() + bytes([5 << 3 | 0, 1])
    req = f.request()
    req.resource_spans[0].scope_spans[0].spans.add().MergeFromString(raw)
    assert _post(client, key, req.SerializeToString()).status_code == 200
    assert _post(client, key, good).status_code == 200
    get_writer().flush(force=True)
    assert len(attempts(project.id)) == 2


def test_an_unreadable_record_is_quarantined_and_the_others_land(alpha, clickhouse, tmp_path):
    from ingest.writer import Writer

    project, _ = alpha
    spool = Spool(tmp_path, segment_spans=1, max_bytes=1 << 20, fsync=False, max_age_s=60)
    spool.append(project.id, f.request(f.attempt()).SerializeToString(), 1)
    (tmp_path / "00000000000000000001-1-000001.seg").write_bytes(frame(spool_record(b"\x0a\xff\xff\x03xx", project.id)))
    spool.append(project.id, f.request(f.attempt()).SerializeToString(), 1)
    Writer(spool, interval_s=60).flush(force=True)  # refused, bisected: the two good records land
    assert len(attempts(project.id)) == 2
    [entry] = quarantine.entries(tmp_path)
    assert entry.records == 1 and entry.code == 32 and entry.reason == "clickhouse_32"  # ATTEMPT_TO_READ_AFTER_EOF
    assert (tmp_path / QUARANTINE / f"{entry.name}.seg").read_bytes() == frame(spool_record(b"\x0a\xff\xff\x03xx", project.id))
    assert not list(tmp_path.glob("*.seg")) and not list(tmp_path.glob("*.batch"))


def test_a_segment_named_by_a_manifest_is_not_put_in_a_new_batch(alpha, clickhouse, tmp_path):
    project, _ = alpha
    spool = Spool(tmp_path, segment_spans=1, max_bytes=1 << 20, fsync=False, max_age_s=60)
    for _ in range(2):
        spool.append(project.id, f.request(f.attempt()).SerializeToString(), 1)
    first = spool.claim_batch(1 << 20)  # manifest [A, B]; this writer keeps B locked (still working)
    a, b = first.segments
    a.release()
    spool.append(project.id, f.request(f.attempt()).SerializeToString(), 1)  # C
    second = Spool(tmp_path, segment_spans=1, max_bytes=1 << 20, fsync=False, max_age_s=60).claim_batch(1 << 20)
    # the manifest cannot be taken whole (B is held); A belongs to it, so only C forms a new batch
    assert [s.path for s in second.segments] == [p for p in sorted(tmp_path.glob("*.seg")) if p not in (a.path, b.path)]
    assert second.token != first.token
    second.release()
    b.release()


def test_deeply_nested_or_odd_json_is_a_400_or_a_partial_success(client, alpha):
    _, key = alpha
    deep = '{"resourceSpans":' + "[" * 100_000 + "]" * 100_000 + "}"
    response = _post(client, key, deep, "application/json")
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (400, "malformed_json")
    response = _post(client, key, json.dumps({"resourceSpans": [5, "x", None]}), "application/json")
    assert response.status_code == 200


def test_an_unwritable_spool_answers_503_not_500(client, alpha, monkeypatch):
    _, key = alpha
    spool = get_writer().spool

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spool, "append", full)
    response = _post(client, key, f.request(f.attempt()).SerializeToString())
    assert (response.status_code, response["X-Latency-Obs-Reason"]) == (503, "spool_full")
    assert Status.FromString(response.content).message.startswith("spool_full:")  # retryable, nothing acknowledged
