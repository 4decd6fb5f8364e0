"""Simulated traffic with injected incidents, sent through the real OTel SDK and ingest path, then materialized.

Tests that need a service with known incidents (the simulator's own end-to-end tests, incident detection accuracy)
call send_simulated(); its signature and return value are a contract, keep them stable.
"""
import functools
import hashlib
import importlib.metadata
import os
import pickle
import shutil
import struct
import tempfile
import time
import zlib
from array import array
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from pathlib import Path

from analysis.rollups.materialize import materialize

from ingest import metrics as metrics_in
from ingest.otlp_proto import read_varint
from ingest.pipeline import OverLimit, export, flush_started_writers
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
                   metrics: bool = False, metrics_only: bool = False, layers: bool = False,
                   materialized: bool = True) -> Simulated:
    """Send `duration` of `service`'s traffic on the `base` scenario with `incidents` into `project`, then materialize.

    project: a projects.Project (its id is materialized); key: a raw API key with the ingest scope.
    base: a preset name (simulator.scenarios.PRESETS) or a Scenario. duration: seconds or "90s"/"40m"/"1h".
    incidents: strings like "network_overhead@40m+20m:tenant=acme" or IncidentSpecs (start counted from the run's
    start). endpoint: an OTLP/HTTP URL (e.g. f"{live_server.url}/v1/traces") to send over HTTP; None hands the
    spans to the ingest pipeline in-process. Simulated time maps to real instants ending now, as `simulate` does
    (start = now - duration). metrics: also the engine's metrics (simulator.engine_metrics) through /v1/metrics's
    path; metrics_only: those and no spans. layers: two layers in one trace, `<service>-gateway` in front of
    `<service>-engine` (simulate --layers; the engine's metrics are the engine's). Raises ValueError for a bad
    incident, as the command does. materialized=False leaves storing (ingest.pipeline.flush_started_writers) and materializing to the caller: a
    test sending many services into one project stores them in a few INSERTs (each costs ~0.1 s whatever it holds: a
    flush per send was 5 INSERTs with metrics, 150 in test_layers_diagnosed) and materializes its window once
    (materialize() redoes every service of the project's hours, so one call per send grew with each service sent:
    57 s of 12 sends of 45 minutes, cProfile).
    """
    scenario = PRESETS[base] if isinstance(base, str) else base
    seconds = parse_duration(duration) if isinstance(duration, str) else float(duration)
    specs = [parse_incident(i) if isinstance(i, str) else i for i in incidents]
    check_incidents(specs, scenario, seconds, service, layers=layers)
    base_ns = time.time_ns() - int(seconds * 1e9)
    if endpoint:
        runs, attempts = _generate(HttpSink(endpoint, key), scenario, seconds, specs, seed, service, base_ns,
                                   metrics, metrics_only, layers)
    else:
        runs, attempts = _cached(key, scenario, seconds, specs, seed, service, base_ns, metrics, metrics_only, layers)
    start = datetime.fromtimestamp(base_ns / 1e9, timezone.utc)
    end = start + timedelta(seconds=seconds)
    if materialized:
        flush_started_writers()
        # from the run's start: nothing of it is queued before (the hour before would be aggregated empty, ~0.5 s a
        # call); an hour past its end for retries and streams that outlast it
        materialize(project.id, start, end + timedelta(hours=1))
    injected = [Injected(s, start + timedelta(seconds=s.start_s), start + timedelta(seconds=s.end_s)) for s in specs]
    return Simulated(service, start, end, injected, runs, attempts)


class HttpSink:
    """The real OTLP/HTTP exporters of `simulate --endpoint`."""

    def __init__(self, endpoint: str, key: str):
        self.endpoint, self.key = endpoint, key

    def spans(self):
        return make_exporter(self.endpoint, self.key, "http")

    def metrics(self):
        return make_metric_exporter(self.endpoint, self.key, "http")


def _generate(sink, scenario, seconds, specs, seed, service, base_ns, metrics, metrics_only, layers) -> tuple[int, int]:
    """Simulate and export through the real SDK into sink's exporters; (runs, attempts)."""
    exporter = sink.spans()
    emitter = Emitter(exporter, base_ns, seed=seed, cap=scenario.cap)
    engine = EngineMetrics(scenario, f"{service}-engine" if layers else service, base_ns, 0.0, seconds) \
        if metrics or metrics_only else None
    totals = run_simulation(emitter, scenario, seconds, seed, service, incidents=specs,
                            observe=engine.observe if engine else None, send_spans=not metrics_only, layers=layers)
    emitter.close()
    if engine:
        engine.export(sink.metrics())
    return totals.runs, totals.attempts


class _Recorder:
    """In-process exporters whose OTLP bodies are kept (to deliver, and to replay later in this session)."""

    def __init__(self, key: str):
        self.span_exporter, self.metric_exporter = InProcessExporter(key), InProcessMetricExporter(key)

    def spans(self):
        return self.span_exporter

    def metrics(self):
        return self.metric_exporter


# Simulated traffic generated once per machine and code: the OTLP bodies of each (scenario, duration, incidents,
# seed, service, metrics, layers) sent so far, with the instant its simulated clock started, kept in a file. Sent
# again (in this run or a later one), they are replayed with every timestamp moved by the time since: the same spans
# and metrics, byte for byte but for the clock, as generating them anew with the new start would give (the emitter
# writes base_ns + the simulated offset into each timestamp). The simulator and the SDK's encoding are the real ones
# the first time; the ingest path and materializing run every time. The files live in TRAFFIC_CACHE (default
# ~/.cache/latency_obs/simulated-traffic; "off": this process's data dir only, gone after the run), in a folder named
# for the code that made them (simulator/, this file, the OTel SDK's and protobuf's versions): any change to those
# generates anew. Generating was most of a simulated test's time (the localized accuracy test: 69 of 101 s, cProfile).
TRAFFIC_CACHE = "LATENCY_OBS_TEST_TRAFFIC_CACHE"
STALE_DAYS = 3  # folders of other code not used for this long are removed


def _cache_dir() -> Path:
    setting = os.environ.get(TRAFFIC_CACHE, str(Path.home() / ".cache" / "latency_obs" / "simulated-traffic"))
    if setting.lower() in ("", "off", "0", "no"):
        path = Path(os.environ.get("LATENCY_OBS_DATA_DIR") or tempfile.gettempdir()) / "simulated_traffic"
    else:
        path = Path(setting) / _code_version()
        if not path.is_dir():
            _remove_stale(path.parent)
    path.mkdir(parents=True, exist_ok=True)
    os.utime(path)  # used now: a folder whose traffic is all kept gets no new file, and must not look stale
    return path


@functools.lru_cache(maxsize=1)
def _code_version() -> str:
    """A digest of what the bodies depend on: the simulator's and this file's source, the SDK's and protobuf's versions."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for source in sorted((root / "simulator").rglob("*.py")) + [Path(__file__).resolve()]:
        digest.update(source.relative_to(root).as_posix().encode() + b"\0" + source.read_bytes())
    for package in ("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-common", "opentelemetry-proto", "protobuf"):
        digest.update(f"{package}=={importlib.metadata.version(package)}".encode())
    return digest.hexdigest()[:16]


def _remove_stale(parent: Path) -> None:
    """Other code's folders unused for STALE_DAYS (another checkout may be using a recent one)."""
    cutoff = time.time() - STALE_DAYS * 86400
    for folder in parent.glob("*") if parent.is_dir() else ():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)


def _cached(key, scenario, seconds, specs, seed, service, base_ns, metrics, metrics_only, layers) -> tuple[int, int]:
    """Generate (first time on this machine and code) or replay (after) the traffic in-process, delivering it to
    ingest with `key`."""
    def make():
        recorder = _Recorder(key)
        totals = _generate(recorder, scenario, seconds, specs, seed, service, base_ns, metrics, metrics_only, layers)
        return recorder.span_exporter.bodies, recorder.metric_exporter.bodies, totals

    spans, points, (runs, attempts) = generated(
        (scenario, seconds, specs, seed, service, bool(metrics or metrics_only), metrics_only, layers), base_ns, make)
    span_exporter, metric_exporter = InProcessExporter(key), InProcessMetricExporter(key)
    span_exporter.bodies, metric_exporter.bodies = list(spans), list(points)
    span_exporter.deliver()
    metric_exporter.deliver()
    return runs, attempts


def generated(what: tuple, base_ns: int, make) -> tuple[list[bytes], list[bytes], object]:
    """(span bodies, metric bodies, what else make() said) of the traffic `what` (its parameters: repr() names it)
    with its simulated clock starting at base_ns: make()'s, which generates it at base_ns, the first time on this
    machine and code; after, the kept bodies with every timestamp moved to base_ns."""
    path = _cache_dir() / f"{hashlib.sha256(repr(what).encode()).hexdigest()[:24]}.bin"
    hit = _load(path)  # (base_ns, span bodies, their timestamps' offsets, metric bodies, extra)
    if hit is None:
        spans, points, extra = make()
        kept = (base_ns, spans, [_timestamp_offsets(b) for b in spans], points, extra)
        scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        scratch.write_bytes(zlib.compress(pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL), 1))
        os.replace(scratch, path)  # whole or not at all: another worker may read it now
        return spans, points, extra
    cached_ns, spans, offsets, points, extra = hit
    shift = base_ns - cached_ns
    return [_shifted(b, o, shift) for b, o in zip(spans, offsets)], [_shift_metrics(b, shift) for b in points], extra


def _load(path: Path) -> tuple | None:
    try:
        return pickle.loads(zlib.decompress(path.read_bytes()))
    except (OSError, zlib.error, pickle.UnpicklingError, EOFError, ValueError):  # none yet, or damaged: generate
        return None


# Where a span body's timestamps are, found once when it is kept: OTLP's span start and end and its events' times are
# fixed64 fields (8 bytes, whatever the value), so a moved clock rewrites those bytes in place; the body is otherwise
# the same. Parsing and serializing every body again to move them was ~6 % of the localized accuracy test's CPU
# (py-spy, 2026-11-29).
_SPAN_PATH = {(): {1}, (1,): {2}, (1, 2): {2}, (1, 2, 2): {11}}  # request > resource_spans > scope_spans > spans > events
_TIMES = {(1, 2, 2): {7, 8}, (1, 2, 2, 11): {1}}  # Span.start/end_time_unix_nano, Event.time_unix_nano
_FIXED64 = struct.Struct("<Q")


def _timestamp_offsets(body: bytes) -> array:
    """The byte offsets of every span's and event's timestamps in an ExportTraceServiceRequest body."""
    found = array("I")
    _walk(memoryview(body), 0, len(body), (), found)
    return found


def _walk(buf, at: int, end: int, path: tuple, found: array) -> None:
    times, inner = _TIMES.get(path, ()), _SPAN_PATH.get(path, ())
    while at < end:
        tag, at = read_varint(buf, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, at = read_varint(buf, at)
        elif wire == 1:
            if number in times:
                found.append(at)
            at += 8
        elif wire == 2:
            size, at = read_varint(buf, at)
            if number in inner:
                _walk(buf, at, at + size, path + (number,), found)
            at += size
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"wire type {wire} in a span body")


def _shifted(body: bytes, offsets: array, shift: int) -> bytes:
    """The body with every timestamp at `offsets` moved by `shift` ns."""
    moved = bytearray(body)
    unpack, pack = _FIXED64.unpack_from, _FIXED64.pack_into
    for at in offsets:
        pack(moved, at, unpack(moved, at)[0] + shift)
    return bytes(moved)


def _shift_metrics(body: bytes, shift: int) -> bytes:
    request = ExportMetricsServiceRequest.FromString(body)
    for resource in request.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                kind = metric.WhichOneof("data")
                for point in getattr(metric, kind).data_points:
                    if point.start_time_unix_nano:
                        point.start_time_unix_nano += shift
                    point.time_unix_nano += shift
                    if metric.name == "process_start_time_seconds":  # an instant, as the simulator's clock gives it
                        point.as_double += shift / 1e9
    return request.SerializeToString()
