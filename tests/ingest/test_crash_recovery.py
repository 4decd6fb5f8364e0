"""kill -9 of `up` under load loses no acknowledged span and stores nothing twice after the restart."""
import os
import threading
import time

import pytest
import requests

from tests import factories as f
from tests.live import UpProcess

pytestmark = pytest.mark.slow
SENDERS, SPANS_PER_REQUEST = 3, 200


def _sender(url, key, stop, acked, lock):
    session = requests.Session()
    while not stop.is_set():
        spans = [f.attempt(tenant="t%d" % (i % 7)) for i in range(SPANS_PER_REQUEST)]
        body = f.request(*spans).SerializeToString()
        try:
            response = session.post(url, data=body, timeout=10, headers={
                "Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"})
        except requests.RequestException:
            return  # the server died mid-request: this batch was never acknowledged
        if response.status_code == 200:
            with lock:
                acked.update(s.span_id.hex() for s in spans)


def test_kill_9_under_load_loses_no_acknowledged_span(tmp_path):
    up = UpProcess(tmp_path, INGEST_SPOOL_FSYNC="1", INGEST_SEGMENT_SPANS="2000")
    up.manage("migrate", "--noinput")
    key = up.manage("create_api_key", "--project", "crash", "--scope", "ingest,read").strip()
    up.start()
    acked, lock, stop = set(), threading.Lock(), threading.Event()
    threads = [threading.Thread(target=_sender, args=(up.url + "/v1/traces", key, stop, acked, lock)) for _ in range(SENDERS)]
    for t in threads:
        t.start()
    time.sleep(3)  # long enough for several segments to be inserted and others to wait in the spool
    up.kill()
    stop.set()
    for t in threads:
        t.join(30)
    assert len(acked) >= 2 * SPANS_PER_REQUEST, "the load did not get going before the kill"
    left = [p for p in os.listdir(tmp_path / "spool") if p.endswith(".seg")]
    assert left, "nothing was waiting in the spool at the kill: the recovery path was not exercised"
    print(f"acked {len(acked)} spans; {len(left)} segment(s) left by the killed process")

    up.start()  # the new process's writer claims the dead one's segments
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and os.listdir(tmp_path / "spool"):
        time.sleep(0.5)
    up.stop()
    [(physical, distinct)] = up.query_json("SELECT count(), uniqExact(span_id) FROM spans")
    stored = {row[0] for row in up.query_json("SELECT span_id FROM spans")}
    print(f"stored {len(stored)} spans after restart")
    assert acked <= stored, f"{len(acked - stored)} acknowledged spans lost"
    assert physical == distinct, "a span was stored twice"
