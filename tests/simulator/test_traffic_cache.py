"""tests/simulated.py keeps generated traffic per machine and code: sent again, it is the same spans, moved in time."""
import pytest

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from store import client
from tests import factories as f
from tests import simulated
from tests.simulated import send_simulated

SPANS = ("SELECT name, service, role, status, count(), round(sum(duration_ms), 3), "
         "toUnixTimestamp64Nano(min(start_at)), toUnixTimestamp64Nano(max(end_at)) "
         "FROM spans FINAL WHERE project_id = {p:UInt32} GROUP BY name, service, role, status ORDER BY name, role, status")


def _stored(project_id: int) -> list[tuple]:
    return client.query_rows(SPANS, {"p": project_id})


def test_traffic_sent_again_is_replayed_the_same_moved_to_its_new_start(clickhouse, alpha, beta, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setenv(simulated.TRAFFIC_CACHE, str(tmp_path))
    (first_project, first_key), (again_project, again_key) = alpha, beta
    first = send_simulated(first_project, first_key, duration="2m", seed=41, service="cached")
    [folder] = tmp_path.iterdir()  # named for the code that made it
    assert folder.name == simulated._code_version() and len(list(folder.glob("*.bin"))) == 1

    def generate(*args):
        raise AssertionError("generated again")

    monkeypatch.setattr(simulated, "_generate", generate)
    again = send_simulated(again_project, again_key, duration="2m", seed=41, service="cached")
    assert (again.runs, again.attempts) == (first.runs, first.attempts) and first.attempts > 0
    was, now = _stored(first_project.id), _stored(again_project.id)
    # the same spans with the same durations, each instant moved by one shift: the time between the two sends
    assert [r[:6] for r in now] == [r[:6] for r in was] and sum(r[4] for r in was) > first.attempts
    [shift] = {b - a for x, y in zip(was, now) for a, b in ((x[6], y[6]), (x[7], y[7]))}
    assert abs(shift / 1e9 - (again.start - first.start).total_seconds()) < 1e-3 and shift > 0
    with pytest.raises(AssertionError, match="generated again"):  # other traffic is generated
        send_simulated(again_project, again_key, duration="2m", seed=42, service="cached")


def test_other_code_generates_anew_and_its_stale_folders_go(tmp_path, monkeypatch):
    import os
    import time

    monkeypatch.setenv(simulated.TRAFFIC_CACHE, str(tmp_path))
    stale, recent = tmp_path / "0000stale", tmp_path / "0000recent"
    stale.mkdir(), recent.mkdir()
    os.utime(stale, (time.time() - 4 * 86400,) * 2)
    current = simulated._cache_dir()
    assert current == tmp_path / simulated._code_version()
    assert not stale.exists() and recent.exists()  # another checkout's recent folder stays
    os.utime(current, (time.time() - 4 * 86400,) * 2)
    assert simulated._cache_dir() == current and current.stat().st_mtime > time.time() - 60  # in use: not stale
    monkeypatch.setenv(simulated.TRAFFIC_CACHE, "off")  # this process's data dir only
    assert simulated._cache_dir().name == "simulated_traffic"


def test_a_kept_body_is_moved_in_place_exactly_as_its_parsed_spans_would_be():
    # every timestamp a span body holds (span start and end, each event's time), whatever else the spans carry; the
    # body is rewritten at the offsets found when it was kept, never parsed again
    request = f.request(f.attempt(), f.attempt(t_queue_ms=5.0, tenant="bob"),
                        f.span("retrieve", attributes={"k": "v" * 300}, events=[("a", 1.0), ("a", 2.0)]),
                        service="moved", resource={"deployment.environment": "test"})
    request.resource_spans.add().CopyFrom(request.resource_spans[0])  # a second resource
    body, shift = request.SerializeToString(), 86_400 * 10**9 + 123
    offsets = simulated._timestamp_offsets(body)
    expected = ExportTraceServiceRequest.FromString(body)
    times = 0
    for resource in expected.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                span.start_time_unix_nano += shift
                span.end_time_unix_nano += shift
                times += 2
                for event in span.events:
                    event.time_unix_nano += shift
                    times += 1
    assert len(offsets) == times > 20
    assert ExportTraceServiceRequest.FromString(simulated._shifted(body, offsets, shift)) == expected
