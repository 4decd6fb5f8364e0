"""dashboard/waterfall.py and charts.waterfall on hand-made rows: a retried run (failed attempt, back-off, a
second attempt with stage spans) gets one row per thing drawn, each bar one row tall, the failed attempt marked."""
from analysis.buckets import STAGES
from dashboard import charts, waterfall

MS = 1_000_000
T0 = 1_767_000_000_000 * MS  # any instant: offsets are what the layout shows


def attempt(no: int, start_ms: float, total_ms: float, status="ok", cause="", **buckets) -> dict:
    """An attempt row as analysis.reads.runs.attempts returns it; buckets t_queue_ms.. set to None unless given."""
    queued = T0 + int(start_ms * MS)
    t_queue = buckets.get("t_queue_ms")
    row = {"span_id": f"a{no}", "trace_id": "t", "attempt": no, "status": status, "retry_cause": cause,
           "start_ns": queued, "queued_ns": queued, "released_ns": queued + int(total_ms * MS),
           "admitted_ns": queued + int(t_queue * MS) if t_queue is not None else None,
           "first_token_ns": None, "last_token_ns": None, "instance": "gw-1", "service": "svc"}
    return {**row, **{f"{name}_ms": buckets.get(f"{name}_ms") for name in STAGES}}


def span(span_id: str, parent: str, start_ms: float, ms: float, name="", stage="", status="ok") -> dict:
    return {"span_id": span_id, "parent_span_id": parent, "name": name or span_id, "stage": stage,
            "role": "stage" if stage else "other", "status": status, "start_ns": T0 + int(start_ms * MS),
            "end_ns": T0 + int((start_ms + ms) * MS), "event_names": [], "event_ns": [], "span_attributes": {}}


def retried_run() -> dict:
    """Attempt 1 fails (timeout) after 3000 ms at +0, 400 ms back-off, attempt 2 at +3400 for 800 ms with a
    connect stage; the run's root span holds both."""
    attempts = [attempt(1, 0, 3000, "error", "timeout", t_queue_ms=50.0, t_conn_ms=20.0),
                attempt(2, 3400, 800, t_queue_ms=10.0, t_conn_ms=30.0)]
    spans = [span("root", "", 0, 4200, name="chat.handle"), span("a1", "root", 0, 3000, status="error"),
             span("a2", "root", 3400, 800), span("c2", "a2", 3410, 30, name="connect", stage="connect")]
    return waterfall.layout(attempts, spans)


def test_each_attempt_back_off_bucket_split_and_span_has_its_own_row():
    rows = retried_run()["rows"]
    assert [(r["label"], [s["group"] for s in r["segments"]]) for r in rows] == [
        ("chat.handle", ["other span"]),
        ("attempt 1 (error: timeout)", ["failed attempt"]),
        ("buckets", ["t_queue", "t_conn"]),
        ("back-off before attempt 2", ["retry back-off"]),
        ("attempt 2 (ok)", ["attempt"]),
        ("buckets", ["t_queue", "t_conn"]),
        ("connect", ["stage connect"]),
    ]
    backoff = rows[3]["segments"][0]
    assert (backoff["base"], backoff["ms"]) == (3000, 400)  # from attempt 1's end to attempt 2's start


def test_segments_sharing_a_row_never_overlap():
    for row in retried_run()["rows"]:
        spans = sorted((s["base"], s["base"] + s["ms"]) for s in row["segments"])
        assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:])), row["label"]


def test_a_failed_attempt_is_drawn_marked_with_its_cause():
    rows = retried_run()["rows"]
    failed = rows[1]["segments"][0]
    assert failed["text"] == "failed: timeout"
    assert (failed["base"], failed["ms"]) == (0, 3000)
    assert "3 s" in failed["hover"] and "e+" not in failed["hover"]
    assert "text" not in rows[4]["segments"][0]  # the successful attempt carries no mark


def test_every_bar_is_one_row_tall_on_its_own_row():
    spec = charts.waterfall(retried_run()["rows"], "run")
    for trace in spec["data"]:
        if trace["type"] == "scatter":
            continue  # marks for bars too short to see
        assert trace["width"] == [charts.ROW_HEIGHT] * len(trace["y"]), trace["name"]
    assert charts.ROW_HEIGHT < 1  # bars on adjacent rows leave a gap between them
    rows_of = {t["name"]: t["y"] for t in spec["data"] if t["type"] == "bar"}
    assert rows_of["failed attempt"] == [1] and rows_of["attempt"] == [4] and rows_of["retry back-off"] == [3]
    assert rows_of["t_queue"] == [2, 5]  # two rows three apart: drawn one row tall each, not 0.8 x 3
    assert spec["layout"]["yaxis"]["tickvals"] == list(range(7))
