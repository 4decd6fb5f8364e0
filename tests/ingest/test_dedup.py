"""Re-sent requests and replayed spool segments leave one logical row per span."""
from ingest.spool import Spool
from ingest.writer import insert_batch
from tests import factories as f
from tests.helpers import attempts


def _count(clickhouse, project_id, final=True) -> int:
    sql = f"SELECT count() FROM spans {'FINAL' if final else ''} WHERE project_id = {{p:UInt32}}"
    return clickhouse.query_rows(sql, parameters={"p": project_id})[0][0]


def test_a_request_sent_twice_leaves_one_row_per_span(alpha, ingest, clickhouse):
    project, key = alpha
    parent = f.attempt()
    req = f.request(parent, f.stage(parent, "connect", 20, 30), f.attempt())
    clickhouse.command("SYSTEM STOP MERGES spans")  # keep both copies apart, so FINAL has work to do
    try:
        ingest(key, req)
        ingest(key, req)  # the exporter retried: a second segment, a second insert
        # 3 spans sent twice -> 6 stored copies, 3 logical rows; 2 attempts in the view, each once
        assert _count(clickhouse, project.id, final=False) == 6
        assert _count(clickhouse, project.id) == 3
        assert len(attempts(project.id)) == 2
    finally:
        clickhouse.command("SYSTEM START MERGES spans")


def _spool(tmp_path, project_id, requests) -> Spool:
    spool = Spool(tmp_path, segment_spans=1, max_bytes=1 << 20, fsync=False, max_age_s=60)
    for req in requests:  # segment_spans=1: every request closes its own segment
        spool.append(project_id, req.SerializeToString(), len(req.resource_spans[0].scope_spans[0].spans))
    return spool


def test_several_segments_go_in_one_batch_and_leave_the_spool(alpha, clickhouse, tmp_path):
    project, _ = alpha
    spool = _spool(tmp_path, project.id, [f.request(f.attempt(), f.attempt()), f.request(f.attempt())])
    batch = spool.claim_batch(max_bytes=1 << 20)
    assert len(batch.segments) == 2 and batch.manifest.exists()
    assert insert_batch(batch) == 2
    batch.remove()
    assert spool.backlog() == (0, 0) and not list(tmp_path.iterdir())
    assert len(attempts(project.id)) == 3


def test_replaying_a_batch_whose_insert_landed_stores_nothing_twice(alpha, clickhouse, tmp_path):
    project, _ = alpha
    spool = _spool(tmp_path, project.id, [f.request(f.attempt(), f.attempt()), f.request(f.attempt())])
    batch = spool.claim_batch(max_bytes=1 << 20)
    assert insert_batch(batch) == 2
    batch.release()  # the insert landed, then the writer died before removing anything
    # the next writer finds the manifest and replays exactly that group under the same token
    again = Spool(tmp_path, segment_spans=1, max_bytes=1 << 20, fsync=False, max_age_s=60).claim_batch(1 << 20)
    assert again.token == batch.token and [s.path for s in again.segments] == [s.path for s in batch.segments]
    assert insert_batch(again) == 2
    again.remove()
    # 2 + 1 spans, counted without FINAL: the deduplication token dropped the replayed blocks
    assert _count(clickhouse, project.id, final=False) == 3
    assert len(attempts(project.id)) == 3


def test_a_batch_stops_at_the_byte_limit(alpha, clickhouse, tmp_path):
    project, _ = alpha
    spool = _spool(tmp_path, project.id, [f.request(f.attempt()) for _ in range(3)])
    one_segment = min(p.stat().st_size for p in tmp_path.glob("*.seg"))
    batch = spool.claim_batch(max_bytes=one_segment + 1)
    assert len(batch.segments) == 1  # the second segment would pass the limit: next batch
    batch.release()


def test_a_batch_that_landed_but_was_half_cleaned_up_is_not_replayed(alpha, clickhouse, tmp_path):
    project, _ = alpha
    spool = _spool(tmp_path, project.id, [f.request(f.attempt(), f.attempt()), f.request(f.attempt())])
    batch = spool.claim_batch(max_bytes=1 << 20)
    assert insert_batch(batch) == 2
    batch.segments[0].remove()  # the writer died after removing the first segment only
    batch.segments[1].release()
    again = Spool(tmp_path, segment_spans=1, max_bytes=1 << 20, fsync=False, max_age_s=60)
    assert again.claim_batch(1 << 20) is None  # the leftover is deleted, not inserted a second time
    assert not list(tmp_path.iterdir())
    assert _count(clickhouse, project.id, final=False) == 3


def test_a_batch_another_writer_cleaned_up_while_listed_is_passed_over(alpha, tmp_path, monkeypatch):
    """Two writer threads: one lists the manifests, the other removes its landed batch before the first reads it."""
    import pathlib
    project, _ = alpha
    spool = _spool(tmp_path, project.id, [f.request(f.attempt())])
    ghost = tmp_path / "00000000000000000000-1-000001-p1-gone.batch"
    real_glob = pathlib.Path.glob
    monkeypatch.setattr(pathlib.Path, "glob", lambda self, pattern: (
        [ghost, *real_glob(self, pattern)] if pattern.endswith(".batch") else real_glob(self, pattern)))
    batch = spool.claim_batch(max_bytes=1 << 20)  # not FileNotFoundError: the fresh segment is claimed
    assert batch is not None and len(batch.segments) == 1 and not ghost.exists()
    batch.release()


def _parts(clickhouse) -> int:
    return clickhouse.query_rows("SELECT count() FROM system.parts WHERE table = 'spans' AND active")[0][0]


def test_a_batch_written_in_several_blocks_is_replayed_block_for_block(alpha, clickhouse, tmp_path, settings):
    """INGEST_BLOCK_ROWS cuts an INSERT into blocks (each segment file here is one); a writer that died after
    some or all of them landed replays the batch under the same token, and ClickHouse drops each landed block
    by its own token (token_0, token_1, ...) because the replay cuts the very same blocks."""
    project, _ = alpha
    settings.INGEST_BLOCK_ROWS = 2
    spool = _spool(tmp_path, project.id, [f.request(*(f.attempt() for _ in range(3))) for _ in range(3)])
    batch = spool.claim_batch(max_bytes=1 << 20)
    clickhouse.command("SYSTEM STOP MERGES spans")  # count the parts each INSERT leaves, and every copy
    try:
        before = _parts(clickhouse)
        assert insert_batch(batch) == 3
        assert _parts(clickhouse) - before == 3  # three blocks: three parts
        batch.release()
        again = Spool(tmp_path, segment_spans=1, max_bytes=1 << 20, fsync=False, max_age_s=60).claim_batch(1 << 20)
        assert again.token == batch.token
        assert insert_batch(again) == 3
        again.remove()
        assert _parts(clickhouse) - before == 3 and _count(clickhouse, project.id, final=False) == 9
    finally:
        clickhouse.command("SYSTEM START MERGES spans")
    settings.INGEST_BLOCK_ROWS = 10_000  # the same batch in one block
    one = _spool(tmp_path / "one", project.id, [f.request(*(f.attempt() for _ in range(3))) for _ in range(3)])
    clickhouse.command("SYSTEM STOP MERGES spans")
    try:
        before = _parts(clickhouse)
        assert insert_batch(one.claim_batch(max_bytes=1 << 20)) == 3
        assert _parts(clickhouse) - before == 1
    finally:
        clickhouse.command("SYSTEM START MERGES spans")
