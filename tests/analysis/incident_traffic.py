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
    exporter = InProcessExporter()
    emitter = Emitter(exporter, int(began.timestamp() * 1e9), seed=seed)
    marks, offset_s = [began], 0.0
    for i, (scenario, minutes) in enumerate(plan):
        duration_s = minutes * 60.0
        for run in simulate(scenario, duration_s, seed=seed * 100 + i, service=service, start_ms=offset_s * 1000):
            emitter.emit(run, cap=scenario.cap)
        offset_s += duration_s
        marks.append(began + timedelta(seconds=offset_s))
    emitter.close()
    exporter.send(key)
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
