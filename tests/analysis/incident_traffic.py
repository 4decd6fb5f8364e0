"""Simulated traffic with incidents, sent in-process through the real OTel SDK and ingest path, then materialized.

phases(...) chains simulator phases of one service as simulator/demo.py does (a preset per phase, one simulated
clock), exports the spans with the real SDK and hands them to ingest.pipeline.export (no HTTP server: the encoder and the
decode -> spool -> writer path are the real ones) and materializes the hours they touch. It returns where each
phase began, so a test knows the injected onsets and ends.
"""
from datetime import datetime, timedelta, timezone

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from analysis.rollups.materialize import materialize
from ingest.pipeline import export, get_writer
from simulator.emit import Emitter
from simulator.model import simulate
from tests.simulated import generated


class InProcessExporter(SpanExporter):
    """OTLP protobuf bodies, as the HTTP exporter would send them, kept for send() to hand to export().

    TRICKY: the SDK exports on its own thread, whose DB connection cannot see the test's uncommitted project
    and key (and would wait on its locks): the bodies are ingested from the test's thread instead."""

    def __init__(self):
        self.bodies: list[bytes] = []

    def export(self, spans) -> SpanExportResult:
        self.bodies.append(encode_spans(spans).SerializeToString())
        return SpanExportResult.SUCCESS

    def send(self, key: str) -> None:
        for body in self.bodies:
            export(f"Bearer {key}", body, "protobuf")
        self.bodies = []

    def shutdown(self) -> None:
        pass


def phases(project, key, service: str, plan, began: datetime, seed: int = 1, materialized: bool = True) -> list[datetime]:
    """Send `plan` = [(Scenario, minutes), ...] for `service` from `began` (aware UTC, whole minute); returns the
    start instant of each phase plus the end of the last one. materialized=False leaves materializing to the caller
    (settle()), so several services' sends into one project are materialized once."""
    base_ns = int(began.timestamp() * 1e9)

    def make():
        exporter = InProcessExporter()
        emitter = Emitter(exporter, base_ns, seed=seed)
        offset_s = 0.0
        for i, (scenario, minutes) in enumerate(plan):
            for run in simulate(scenario, minutes * 60.0, seed=seed * 100 + i, service=service,
                                start_ms=offset_s * 1000):
                emitter.emit(run, cap=scenario.cap)
            offset_s += minutes * 60.0
        emitter.close()
        return exporter.bodies, [], None

    exporter = InProcessExporter()
    # generated once per machine and code, as send_simulated's traffic (tests/simulated.py)
    exporter.bodies, _, _ = generated(("phases", service, tuple(plan), seed), base_ns, make)
    exporter.send(key)
    marks = [began]
    for _, minutes in plan:
        marks.append(marks[-1] + timedelta(minutes=minutes))
    if materialized:
        settle(project, began, marks[-1])
    return marks


def settle(project, began: datetime, end: datetime) -> None:
    """Flush what was sent and materialize the project's hours of [began, end) and the hour after (retries and
    streams outlasting the last phase); nothing is queued before `began`."""
    get_writer().flush(force=True)
    materialize(project.id, began, end + timedelta(hours=1))


def whole_minute(t: datetime) -> datetime:
    return t.astimezone(timezone.utc).replace(second=0, microsecond=0)
