"""simulator/demo.py: the demo's hour holds one two-layer pair besides the single-layer services."""
import threading
import time

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from simulator import demo
from simulator.scenarios import DEMO_LAYERED, DEMO_SERVICES

pytestmark = pytest.mark.slow  # runs every demo service through the simulator


def test_the_demo_sends_a_gateway_and_its_engine_in_one_trace(monkeypatch):
    exporter = InMemorySpanExporter()
    monkeypatch.setattr(demo, "make_exporter", lambda *args: exporter)
    monkeypatch.setattr(demo, "make_metric_exporter", lambda *args: None)
    monkeypatch.setattr(demo.EngineMetrics, "export", lambda self, metric_exporter: 0)
    monkeypatch.setattr(demo, "HOUR_S", 120.0)  # two simulated minutes of each service stand for the hour
    runs, sent = demo.preload("http://unused", "k", threading.Event(), time.time_ns() - 120 * 10**9)
    spans = exporter.get_finished_spans()
    assert runs > 0 and sent == len(spans)
    service = {s.context.span_id: s.resource.attributes["service.name"] for s in spans}
    assert set(DEMO_SERVICES) <= set(service.values())
    [pair] = DEMO_LAYERED
    engines = [s for s in spans if service[s.context.span_id] == f"{pair}-engine"]
    assert engines and {service.get(s.parent.span_id) for s in engines} == {f"{pair}-gateway"}
