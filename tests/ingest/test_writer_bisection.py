"""A batch ClickHouse refuses for its data: every other span lands once, the spans at fault are quarantined."""
import shutil

import pytest
from django.core.management import call_command

from ingest import faults, quarantine
from ingest.otlp_proto import frame, spool_record
from ingest.pipeline import get_writer
from ingest.spool import QUARANTINE, Spool
from ingest.writer import Bisection, Writer, insert_batch
from store import client
from tests import factories as f
from tests.helpers import spans

DAY_NS = 86_400 * 10**9


@pytest.fixture(autouse=True)
def empty_quarantine(settings):
    """The process's spool is shared by this worker's tests: leave no quarantine entry behind."""
    yield
    shutil.rmtree(settings.INGEST_SPOOL_DIR / QUARANTINE, ignore_errors=True)


def _odd_request(good: int) -> bytes:
    """`good` attempts and one span whose name (field 5) is a varint: Python keeps it, ClickHouse refuses it."""
    req = f.request(*(f.attempt() for _ in range(good)))
    raw = f.attempt().SerializeToString() + bytes([5 << 3 | 0, 1])
    req.resource_spans[0].scope_spans[0].spans.add().MergeFromString(raw)
    return req.SerializeToString()


def _stored(project_id) -> int:
    return len(spans(project_id, columns="span_id"))


def test_a_request_over_101_days_is_stored_whole_by_halves_and_blocks_nobody(alpha, beta, clickhouse, settings):
    (alpha, key_a), (beta, key_b) = alpha, beta
    # 101 valid spans, one per day: one INSERT of them all needs 101 partitions (ClickHouse allows 100)
    days = [f.span(start_ns=f.BASE_NS - d * DAY_NS) for d in range(101)]
    writer = get_writer()
    writer.spool.append(alpha.id, f.request(*days).SerializeToString(), 101)
    writer.spool.append(beta.id, f.request(f.attempt()).SerializeToString(), 1)
    writer.flush(force=True)
    assert (_stored(alpha.id), _stored(beta.id)) == (101, 1)
    assert quarantine.entries(settings.INGEST_SPOOL_DIR) == [] and writer.spool.backlog() == (0, 0)


def test_the_span_at_fault_alone_is_quarantined_with_its_reason(alpha, beta, clickhouse, tmp_path):
    (alpha, _), (beta, _) = alpha, beta
    spool = Spool(tmp_path, segment_spans=100, max_bytes=1 << 24, fsync=False, max_age_s=60)
    spool.append(alpha.id, _odd_request(good=7), 8)
    spool.append(beta.id, f.request(f.attempt(), f.attempt()).SerializeToString(), 2)
    Writer(spool, interval_s=60).flush(force=True)
    assert (_stored(alpha.id), _stored(beta.id)) == (7, 2)  # 8 spans of alpha's request, 1 at fault
    [entry] = quarantine.entries(tmp_path)
    assert entry.spans == {str(alpha.id): 1} and entry.code is not None and entry.reason == f"clickhouse_{entry.code}"
    assert not list(tmp_path.glob("*.seg")) and not list(tmp_path.glob("*.batch"))


def test_a_replayed_bisection_stores_nothing_twice(alpha, clickhouse, tmp_path):
    alpha, _ = alpha
    spool = Spool(tmp_path, segment_spans=100, max_bytes=1 << 24, fsync=False, max_age_s=60)
    spool.append(alpha.id, _odd_request(good=5), 6)
    spool.rotate(force=True)
    batch = spool.claim_batch(1 << 24)
    # TRICKY: a background merge of the ReplacingMergeTree would fold a duplicate away before the count
    client.command("SYSTEM STOP MERGES spans")
    try:
        # a writer that bisected, then died before removing the batch: the next one replays the same parts
        with pytest.raises(client.ClickHouseError) as refused:
            insert_batch(batch)
        Bisection(batch, budget_s=60).run(refused.value)
        batch.release()
        Writer(spool, interval_s=60).flush(force=True)
        rows = client.query("SELECT count() AS n, uniqExact(span_id) AS u FROM spans WHERE project_id = {p:UInt32}",
                            parameters={"p": alpha.id})
    finally:
        client.command("SYSTEM START MERGES spans")
    assert rows == [{"n": 5, "u": 5}]  # parts carry deterministic tokens: ClickHouse dropped the replay
    assert len(quarantine.entries(tmp_path)) == 1  # the same entry rewritten, not a second


def test_while_inserts_fail_nothing_is_quarantined_and_everything_lands_after(alpha, clickhouse, tmp_path, settings):
    alpha, _ = alpha
    spool = Spool(tmp_path, segment_spans=1, max_bytes=1 << 24, fsync=False, max_age_s=60)
    for _ in range(3):
        spool.append(alpha.id, f.request(f.attempt()).SerializeToString(), 1)
    writer = Writer(spool, interval_s=60)
    faults.set_inserts_fail(60)
    try:
        with pytest.raises(client.ClickHouseError) as down:
            writer.flush(force=True)
        assert down.value.code is None and spool.backlog()[0] == 3  # transient: kept, not bisected
    finally:
        faults.clear()
    writer.flush(force=True)
    assert _stored(alpha.id) == 3 and quarantine.entries(tmp_path) == []


def test_quarantine_lists_and_replays_after_a_fix(alpha, clickhouse, settings, capsys):
    alpha, _ = alpha
    good = frame(spool_record(f.request(f.attempt(), f.attempt()).SerializeToString(), alpha.id))
    quarantine.put(settings.INGEST_SPOOL_DIR, "fixed-later", good, reason="clickhouse_252", code=252,
                   message="Too many partitions", spans={alpha.id: 2}, count=1)
    call_command("quarantine", "list")
    assert "fixed-later  2 span(s)" in capsys.readouterr().out
    call_command("quarantine", "replay", "--all")
    get_writer().flush(force=True)
    assert _stored(alpha.id) == 2 and quarantine.entries(settings.INGEST_SPOOL_DIR) == []


def test_healthz_and_ingest_status_count_quarantined_spans(client, alpha, beta, clickhouse, settings):
    (alpha, key_a), (beta, _) = alpha, beta
    quarantine.put(settings.INGEST_SPOOL_DIR, "held", b"", reason="clickhouse_6", code=6, message="x",
                   spans={alpha.id: 3, beta.id: 4}, count=2)
    assert client.get("/healthz").json()["quarantined_spans"] == 7  # operators: every project
    status = client.get("/api/v1/ingest/status", HTTP_AUTHORIZATION=f"Bearer {key_a}").json()
    assert status["quarantined_spans"] == 3  # a project: its own


def test_segments_are_claimed_taking_turns_between_projects(tmp_path):
    spool = Spool(tmp_path, segment_spans=1, max_bytes=1 << 24, fsync=False, max_age_s=60)
    for project in (1, 1, 1, 2):
        spool.append(project, f.request(f.attempt()).SerializeToString(), 1)
    claimed = [s for s in spool.claim()]
    assert [int(s.path.stem.rsplit("-p", 1)[1]) for s in claimed] == [1, 2, 1, 1]  # the flood waits its turn
    for s in claimed:
        s.release()
