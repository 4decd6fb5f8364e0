"""Simulated traffic with injected incidents, sent through the real OTel SDK and ingest path, then materialized.

Tests that need a service with known incidents (the simulator's own end-to-end tests, incident detection accuracy)
call send_simulated(); its signature and return value are a contract, keep them stable.
"""
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from analysis.rollups.materialize import materialize

from ingest import metrics as metrics_in
from ingest.pipeline import OverLimit, export, get_writer
from simulator.durations import parse_duration
from simulator.emit import Emitter, make_exporter
from simulator.engine_metrics import EngineMetrics, make_metric_exporter
from simulator.incidents import IncidentSpec, check_incidents, parse_incident
from simulator.runner import run_simulation
from simulator.scenarios import PRESETS, Scenario


class InProcessExporter(SpanExporter):
    """OTLP protobuf bodies for ingest.pipeline.export(), as the HTTP receiver gets them (encoder, decoder, spool and
    writer are the real ones; only the HTTP hop is left out).

    TRICKY: the emitter exports from its own thread, which does not see the test's database transaction (the API
    key would be unknown there), so bodies are kept and handed over by deliver() in the test's thread.
    """

    def __init__(self, key: str):
        self.key, self.bodies = key, []

    def export(self, spans) -> SpanExportResult:
        self.bodies.append(encode_spans(spans).SerializeToString())
        return SpanExportResult.SUCCESS

    def deliver(self) -> None:
        for body in self.bodies:
            while True:  # as an OTLP exporter does with a 429: wait as told, then send again
                try:
                    export(f"Bearer {self.key}", body, "protobuf")
                    break
                except OverLimit as exc:
                    time.sleep(exc.retry_after or 1)
        self.bodies = []

    def shutdown(self) -> None:
        pass


class InProcessMetricExporter(MetricExporter):
    """The SDK's OTLP metrics encoding handed to ingest.metrics.export() in the test's thread (as InProcessExporter)."""

    def __init__(self, key: str):
        super().__init__()
        self.key, self.bodies = key, []

    def export(self, metrics_data, timeout_millis: float = 10_000, **kwargs) -> MetricExportResult:
        self.bodies.append(encode_metrics(metrics_data).SerializeToString())
        return MetricExportResult.SUCCESS

    def deliver(self) -> None:
        for body in self.bodies:
            while True:
                try:
                    metrics_in.export(f"Bearer {self.key}", body, "protobuf")
                    break
                except OverLimit as exc:
                    time.sleep(exc.retry_after or 1)
        self.bodies = []

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs) -> None:
        pass


@dataclass(frozen=True)
class Injected:
    """An injected incident with its absolute instants: the cause was on for [onset, end) (aware UTC)."""

    spec: IncidentSpec
    onset: datetime
    end: datetime

    @property
    def cause(self) -> str:
        return self.spec.cause

    @property
    def scope(self) -> tuple | None:
        return self.spec.scope


@dataclass(frozen=True)
class Simulated:
    """What send_simulated sent: the run covered [start, end) (aware UTC, end = about the call's now)."""

    service: str
    start: datetime
    end: datetime
    incidents: list  # Injected, in the order given
    runs: int
    attempts: int


def send_simulated(project, key: str, *, base: str | Scenario = "healthy", duration: str | float = "60m",
                   incidents=(), seed: int = 1, service: str = "llm-gateway", endpoint: str | None = None,
                   metrics: bool = False, metrics_only: bool = False, layers: bool = False) -> Simulated:
    """Send `duration` of `service`'s traffic on the `base` scenario with `incidents` into `project`, then materialize.

    project: a projects.Project (its id is materialized); key: a raw API key with the ingest scope.
    base: a preset name (simulator.scenarios.PRESETS) or a Scenario. duration: seconds or "90s"/"40m"/"1h".
    incidents: strings like "network_overhead@40m+20m:tenant=acme" or IncidentSpecs (start counted from the run's
    start). endpoint: an OTLP/HTTP URL (e.g. f"{live_server.url}/v1/traces") to send over HTTP; None hands the
    spans to the ingest pipeline in-process. Simulated time maps to real instants ending now, as `simulate` does
    (start = now - duration). metrics: also the engine's metrics (simulator.engine_metrics) through /v1/metrics's
    path; metrics_only: those and no spans. layers: two layers in one trace, `<service>-gateway` in front of
    `<service>-engine` (simulate --layers; the engine's metrics are the engine's). Raises ValueError for a bad
    incident, as the command does.
    """
    scenario = PRESETS[base] if isinstance(base, str) else base
    seconds = parse_duration(duration) if isinstance(duration, str) else float(duration)
    specs = [parse_incident(i) if isinstance(i, str) else i for i in incidents]
    check_incidents(specs, scenario, seconds, service, layers=layers)
    base_ns = time.time_ns() - int(seconds * 1e9)
    exporter = make_exporter(endpoint, key, "http") if endpoint else InProcessExporter(key)
    emitter = Emitter(exporter, base_ns, seed=seed, cap=scenario.cap)
    engine = EngineMetrics(scenario, f"{service}-engine" if layers else service, base_ns, 0.0, seconds) \
        if metrics or metrics_only else None
    totals = run_simulation(emitter, scenario, seconds, seed, service, incidents=specs,
                            observe=engine.observe if engine else None, send_spans=not metrics_only, layers=layers)
    emitter.close()
    if not endpoint:
        exporter.deliver()
    if engine:
        metric_exporter = make_metric_exporter(endpoint, key, "http") if endpoint else InProcessMetricExporter(key)
        engine.export(metric_exporter)
        if not endpoint:
            metric_exporter.deliver()
        metrics_in.get_writer().flush(force=True)
    get_writer().flush(force=True)
    start = datetime.fromtimestamp(base_ns / 1e9, timezone.utc)
    end = start + timedelta(seconds=seconds)
    materialize(project.id, start - timedelta(hours=1), end + timedelta(hours=1))
    injected = [Injected(s, start + timedelta(seconds=s.start_s), start + timedelta(seconds=s.end_s)) for s in specs]
    return Simulated(service, start, end, injected, totals.runs, totals.attempts)
