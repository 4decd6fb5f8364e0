"""The simulator's QuickTracer sends what the SDK's own Tracer sends: every format and layer, byte for byte (the
bodies the real OTLP encoder makes of what each hands the span processor)."""
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from simulator.emit import Emitter
from simulator.incidents import parse_incident
from simulator.runner import run_simulation
from simulator.scenarios import PRESETS


class Bodies(SpanExporter):
    def __init__(self):
        self.bodies = []

    def export(self, spans) -> SpanExportResult:
        self.bodies.append(encode_spans(spans).SerializeToString())
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _send(sdk_tracers: bool, preset: str, fmt: str, layers: bool, incidents: tuple) -> list[bytes]:
    out = Bodies()
    emitter = Emitter(out, 1_700_000_000_000_000_000, fmt=fmt, seed=5, cap=PRESETS[preset].cap,
                      sdk_tracers=sdk_tracers)
    run_simulation(emitter, PRESETS[preset], 120.0, 5, "svc", incidents=[parse_incident(i) for i in incidents],
                   layers=layers)
    emitter.close()
    return out.bodies


@pytest.mark.parametrize("preset,fmt,layers,incidents", [
    ("healthy", "native", False, ("network_overhead@30s+60s",)),
    ("retry_amplification", "native", False, ()),  # failed attempts: error status, retry causes, no tokens
    ("queue_backlog", "vllm", False, ()),
    ("cold_start", "native", True, ()),  # two layers: the gateway's calls, the engine's spans under them
])
def test_quick_tracer_bodies_are_the_sdk_tracers(preset, fmt, layers, incidents):
    sdk = _send(True, preset, fmt, layers, incidents)
    quick = _send(False, preset, fmt, layers, incidents)
    assert sum(map(len, sdk)) > 10_000  # something was sent
    assert quick == sdk
