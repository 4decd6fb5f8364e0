"""Re-sent requests and replayed spool segments leave one logical row per span."""
from ingest.spool import Spool
from ingest.writer import insert_segment
from tests import factories as f
from tests.helpers import attempts


def _count(clickhouse, project_id, final=True) -> int:
    sql = f"SELECT count() FROM spans {'FINAL' if final else ''} WHERE project_id = {{p:UInt32}}"
    return clickhouse.query_rows(sql, parameters={"p": project_id})[0][0]


def test_a_request_sent_twice_leaves_one_row_per_span(alice, ingest, clickhouse):
    project, key = alice
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


def test_replaying_a_segment_whose_insert_landed_stores_nothing_twice(alice, clickhouse, tmp_path):
    project, _ = alice
    spool = Spool(tmp_path, segment_spans=1000, max_bytes=1 << 20, fsync=False, max_age_s=60)
    spool.append(project.id, f.request(f.attempt(), f.attempt()).SerializeToString(), 2)
    spool.append(project.id, f.request(f.attempt()).SerializeToString(), 1)
    spool.rotate(force=True)
    [segment] = list(spool.claim())
    try:
        # the insert landed, then the process died before removing the segment: the next writer replays it
        assert insert_segment(segment) is True
        assert insert_segment(segment) is True
    finally:
        segment.remove()
    # 2 + 1 spans, counted without FINAL: the deduplication token dropped the replayed block
    assert _count(clickhouse, project.id, final=False) == 3
    assert len(attempts(project.id)) == 3
