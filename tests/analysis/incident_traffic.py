"""Simulated traffic with incidents, sent in-process through the real OTel SDK and ingest path, then materialized.

phases(...) chains simulator phases of one service as simulator/demo.py does (a preset per phase, one simulated
clock), exports the spans with the real SDK and hands them to ingest.pipeline.export (tests/simulated.py's
InProcessExporter: no HTTP server; the encoder and the decode -> spool -> writer path are the real ones) and
materializes the hours they touch. It returns where each phase began, so a test knows the injected onsets and ends.
"""
from datetime import datetime, timedelta, timezone

from analysis.rollups.materialize import materialize
from ingest.pipeline import get_writer
from simulator.emit import Emitter
from simulator.model import simulate
from tests.simulated import InProcessExporter, generated


def phases(project, key, service: str, plan, began: datetime, seed: int = 1, materialized: bool = True) -> list[datetime]:
    """Send `plan` = [(Scenario, minutes), ...] for `service` from `began` (aware UTC, whole minute); returns the
    start instant of each phase plus the end of the last one. materialized=False leaves materializing to the caller
    (settle()), so several services' sends into one project are materialized once."""
    exporter = InProcessExporter(key)
    # delivered as an OTLP exporter does, waiting when the project's rate limit says so (a replay comes faster than
    # generating)
    exporter.bodies = bodies(key, service, plan, int(began.timestamp() * 1e9), seed)
    exporter.deliver()
    marks = [began]
    for _, minutes in plan:
        marks.append(marks[-1] + timedelta(minutes=minutes))
    if materialized:
        settle(project, began, marks[-1])
    return marks


def bodies(key: str, service: str, plan, base_ns: int, seed: int = 1) -> list[bytes]:
    """The OTLP/HTTP protobuf bodies of `plan` for `service`, its clock starting at base_ns: the phases chained on one
    simulated clock, exported through the real SDK encoding; generated once per machine and code, as send_simulated's
    traffic, and replayed with the clock moved after (tests/simulated.py)."""
    def make():
        exporter = InProcessExporter(key)  # its bodies kept, not delivered
        emitter = Emitter(exporter, base_ns, seed=seed)
        offset_s = 0.0
        for i, (scenario, minutes) in enumerate(plan):
            for run in simulate(scenario, minutes * 60.0, seed=seed * 100 + i, service=service,
                                start_ms=offset_s * 1000):
                emitter.emit(run, cap=scenario.cap)
            offset_s += minutes * 60.0
        emitter.close()
        return exporter.bodies, [], None

    return generated(("phases", service, tuple(plan), seed), base_ns, make)[0]


def settle(project, began: datetime, end: datetime) -> None:
    """Flush what was sent and materialize the project's hours of [began, end) and the hour after (retries and
    streams outlasting the last phase); nothing is queued before `began`."""
    get_writer().flush(force=True)
    materialize(project.id, began, end + timedelta(hours=1))


def whole_minute(t: datetime) -> datetime:
    return t.astimezone(timezone.utc).replace(second=0, microsecond=0)
