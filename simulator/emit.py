"""Simulated runs -> spans through the real OpenTelemetry SDK and OTLP exporters (HTTP or gRPC).

The simulated clock is written into span and event timestamps, so an hour of traffic is sent in
seconds. `native` is the span convention latency_obs teaches (lifecycle events and stage spans);
`vllm` is what vLLM's --otlp-traces-endpoint emits (an `llm_request` span with gen_ai.latency.*).
"""
import queue
import random
import threading

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import (INVALID_SPAN_CONTEXT, NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode,
                                 TraceFlags, get_current_span, set_span_in_context)

from simulator.model import Attempt, Run

NS_PER_MS = 1_000_000


class SeededIds(IdGenerator):
    """Trace and span ids from a seeded generator: the same seed sends the same ids."""

    def __init__(self, seed: int):
        self._rng = random.Random(f"ids:{seed}")
        self._lock = threading.Lock()

    def generate_span_id(self) -> int:
        with self._lock:
            return self._rng.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        with self._lock:
            return self._rng.getrandbits(128) or 1


class BlockingBatchProcessor(SpanProcessor):
    """Batches ended spans for one exporter thread; blocks the producer instead of dropping spans.

    The SDK's BatchSpanProcessor drops spans when its queue is full, which a simulator producing
    an hour of spans in seconds would always do.
    """

    def __init__(self, exporter, batch_size: int = 2000, max_pending: int = 4):
        self.exporter, self.batch_size = exporter, batch_size
        self._batch: list = []
        self._lock = threading.Lock()
        self._queue: queue.Queue = queue.Queue(maxsize=max_pending)
        self.exported = self.failed = 0
        self._thread = threading.Thread(target=self._run, name="sim-exporter", daemon=True)
        self._thread.start()

    def on_start(self, span, parent_context=None) -> None:
        pass

    def on_end(self, span) -> None:
        with self._lock:
            self._batch.append(span)
            full = self._batch if len(self._batch) >= self.batch_size else None
            if full:
                self._batch = []
        if full:
            self._queue.put(full)

    def _run(self) -> None:
        while (batch := self._queue.get()) is not None:
            try:
                ok = self.exporter.export(batch) == SpanExportResult.SUCCESS
            except Exception:  # noqa: BLE001  the thread must live on, or the producer blocks forever on put()
                ok = False
            if ok:
                self.exported += len(batch)
            else:
                self.failed += len(batch)
            self._queue.task_done()
        self._queue.task_done()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            batch, self._batch = self._batch, []
        if batch:
            self._queue.put(batch)
        self._queue.join()
        return True

    def shutdown(self) -> None:
        if not self._thread.is_alive():
            return  # shared by several providers: shut down once
        self.force_flush()
        self._queue.put(None)
        self._thread.join()
        self.exporter.shutdown()


class QuickTracer:
    """What the SDK's Tracer hands its span processor, built directly: the SDK's ReadableSpan with the tracer's
    resource, instrumentation scope and id generator, the ids drawn in the Tracer's order (a root span's trace id,
    then the span id), its sampling (ParentBased(ALWAYS_ON): every span sampled, the parent's trace state) and its
    attribute rule (a None value is dropped). The exporters and the OTLP encoding are the SDK's own.

    TRICKY: the Tracer's per-span work (the sampler, context objects, bounded attributes, locks) was 2/3 of an
    hour's simulation (cProfile: Tracer.start_span 3.2 of 5.7 s for 10 minutes of the healthy preset); the bodies
    are byte for byte the Tracer's (tests/simulator/test_emit.py sends each format both ways and compares).
    """

    def __init__(self, tracer, processor: SpanProcessor):
        self.resource, self.scope = tracer.resource, tracer._instrumentation_scope  # noqa: SLF001
        self.ids, self.processor = tracer.id_generator, processor

    def start_span(self, name: str, context=None, kind: SpanKind = SpanKind.INTERNAL, attributes=None,
                   start_time: int | None = None) -> "QuickSpan":
        parent = get_current_span(context).get_span_context() if context is not None else INVALID_SPAN_CONTEXT
        if not parent.is_valid:
            parent, trace_id = None, self.ids.generate_trace_id()
            random_id = self.ids.is_trace_id_random()
        else:
            trace_id, random_id = parent.trace_id, parent.trace_flags.random_trace_id
        flags = TraceFlags.SAMPLED | (TraceFlags.RANDOM_TRACE_ID if random_id else 0)
        own = SpanContext(trace_id, self.ids.generate_span_id(), is_remote=False, trace_flags=TraceFlags(flags),
                          trace_state=parent.trace_state if parent else None)
        return QuickSpan(self, name, own, parent, kind, start_time,
                         {k: v for k, v in (attributes or {}).items() if v is not None})


class QuickSpan(NonRecordingSpan):
    """A span of QuickTracer: its events, status and end kept until end() hands it to the processor."""

    def __init__(self, tracer: QuickTracer, name, context, parent, kind, start_time, attributes):
        super().__init__(context)
        self._tracer, self._name, self._parent, self._kind = tracer, name, parent, kind
        self._start, self._attributes, self._events = start_time, attributes, []
        self._status = Status(StatusCode.UNSET)

    def add_event(self, name: str, attributes=None, timestamp: int | None = None) -> None:
        self._events.append(Event(name, attributes, timestamp))

    def set_status(self, status, description=None) -> None:
        self._status = status

    def end(self, end_time: int | None = None) -> None:
        t = self._tracer
        t.processor.on_end(ReadableSpan(
            name=self._name, context=self.get_span_context(), parent=self._parent, resource=t.resource,
            attributes=self._attributes, events=tuple(self._events), kind=self._kind, status=self._status,
            start_time=self._start, end_time=end_time, instrumentation_scope=t.scope))


def _no_resource(index: int) -> dict:
    return {}


def make_exporter(endpoint: str, key: str, protocol: str):
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        target = endpoint.split("://", 1)[-1]
        return OTLPSpanExporter(endpoint=target, insecure=True, headers=(("authorization", f"Bearer {key}"),), timeout=60)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=endpoint, headers={"Authorization": f"Bearer {key}"}, timeout=60)


class Emitter:
    """Sends runs as spans; one TracerProvider per (service, instance), one shared export pipeline."""

    def __init__(self, exporter, base_ns: int, fmt: str = "native", seed: int = 1, cap: int = 16,
                 sdk_tracers: bool = False):
        """sdk_tracers: spans through the SDK's own Tracer instead of QuickTracer (the same bodies, ~3x slower)."""
        self.base_ns, self.fmt, self.cap, self.sdk_tracers = base_ns, fmt, cap, sdk_tracers
        self.processor = BlockingBatchProcessor(exporter)
        self._ids = SeededIds(seed)
        self._tracers: dict = {}
        self.runs = 0

    def _ns(self, ms: float) -> int:
        return self.base_ns + int(ms * NS_PER_MS)

    def _tracer(self, service: str, instance: str, resource: dict | None = None, vllm: bool = False):
        """The tracer of (service, instance); `resource`: more resource attributes, taken when it is first made;
        vllm: vLLM's own resource attributes (always in the vllm format)."""
        key = (service, instance)
        if key not in self._tracers:
            attrs = {"service.name": service, "deployment.environment": "simulated", **(resource or {})}
            if instance:
                attrs["service.instance.id"] = instance
            if self.fmt == "vllm" or vllm:
                attrs.update({"vllm.instrumenting_module_name": "vllm.llm_engine", "vllm.process_id": str(1000 + len(self._tracers))})
            provider = TracerProvider(resource=Resource.create(attrs), id_generator=self._ids, shutdown_on_exit=False)
            provider.add_span_processor(self.processor)
            tracer = provider.get_tracer("latency_obs.simulator")
            self._tracers[key] = tracer if self.sdk_tracers else QuickTracer(tracer, self.processor)
        return self._tracers[key]

    def emit(self, run: Run, cap: int | None = None, resource=None) -> None:
        """Send one run's spans; resource(index): an instance's own resource attributes (Scenario.resource)."""
        self.runs += 1
        resource = resource or _no_resource
        if self.fmt == "vllm":
            for attempt in run.attempts:
                if attempt.status == "ok":
                    self._vllm_request(run, attempt, resource(attempt.instance))
            return
        app = self._tracer(f"{run.service}-app", "")
        root = app.start_span("chat.handle", kind=SpanKind.SERVER, start_time=self._ns(run.start),
                              attributes={"tenant.id": run.tenant, "http.route": run.route})
        context = set_span_in_context(root)
        for stage in run.stages:
            self._stage(app, context, stage)
        for attempt in run.attempts:
            self._attempt(run, attempt, context, cap or self.cap, resource(attempt.instance))
        root.end(end_time=self._ns(run.end))

    def emit_layers(self, run: Run, resource=None) -> None:
        """Send one run at two layers, in one trace (docs/simulator.md "Two layers"): the gateway's server span
        (service `<run.service>-gateway`, no stage spans), under it a call per attempt (the gateway's attempts: native
        lifecycle events as the gateway saw them, no `admitted`: the engine's queue is not visible to it), and under
        each call that the engine served, the engine's vLLM `llm_request` span (service `<run.service>-engine`).
        resource(index): an engine instance's own resource attributes."""
        self.runs += 1
        resource = resource or _no_resource
        service = f"{run.service}-gateway"
        number = int(run.id.rsplit("-", 1)[1])
        gateway = self._tracer(service, f"{service}-{number % 2 + 1}")  # two gateway instances, in turn
        server = gateway.start_span(f"POST {run.route}", kind=SpanKind.SERVER, start_time=self._ns(run.start),
                                    attributes={"http.request.method": "POST", "http.route": run.route,
                                                "http.response.status_code": 200 if run.ok else 502})
        context = set_span_in_context(server)
        for a in run.attempts:
            call = self._call(gateway, run, a, context)
            if a.status == "ok":
                self._vllm_request(run, a, resource(a.instance), context=set_span_in_context(call),
                                   service=f"{run.service}-engine")
        if not run.ok:
            server.set_status(Status(StatusCode.ERROR, run.attempts[-1].cause))
        server.end(end_time=self._ns(run.end))

    def _call(self, tracer, run: Run, a: Attempt, context):
        """The gateway's call of one attempt: what it saw, the engine's instants one way back later."""
        end = a.call_end if a.call_end is not None else a.end
        attrs = {
            "tenant.id": run.tenant, "llm.route": run.route, "gen_ai.request.model": run.model,
            "gen_ai.usage.input_tokens": run.input_tokens, "llm.run.id": run.id, "llm.attempt": a.number,
        }
        if a.status == "ok":
            attrs["gen_ai.usage.output_tokens"] = run.output_tokens
        else:
            attrs["llm.retry.cause"] = a.cause
        span = tracer.start_span(f"chat {run.model}", context=context, kind=SpanKind.CLIENT,
                                 start_time=self._ns(a.call_start), attributes=attrs)
        span.add_event("queued", timestamp=self._ns(a.call_start))
        for name in ("first_token", "last_token", "released"):
            at = getattr(a, name)
            if at is not None and at + a.hop_back <= end:  # a token on its way back when the call gave up: unseen
                span.add_event(name, timestamp=self._ns(at + a.hop_back))
        if a.status != "ok":
            span.set_status(Status(StatusCode.ERROR, a.cause))
        span.end(end_time=self._ns(end))
        return span

    def _stage(self, tracer, context, stage) -> None:
        span = tracer.start_span(stage.name, context=context, kind=SpanKind.INTERNAL, start_time=self._ns(stage.start),
                                 attributes={"llm.stage": stage.name})
        span.end(end_time=self._ns(stage.end))

    def _attempt(self, run: Run, a: Attempt, context, cap: int, resource: dict) -> None:
        tracer = self._tracer(run.service, f"{run.service}-{a.instance + 1}", resource)
        attrs = {
            "tenant.id": run.tenant, "llm.route": run.route, "gen_ai.request.model": run.model,
            "gen_ai.usage.input_tokens": run.input_tokens, "llm.run.id": run.id, "llm.attempt": a.number,
            "llm.scheduler.cap": cap,
        }
        if a.admitted is not None:
            attrs["llm.connection.reused"] = a.reused
        if a.status == "ok":
            attrs["gen_ai.usage.output_tokens"] = run.output_tokens
        else:
            attrs["llm.retry.cause"] = a.cause
        span = tracer.start_span("llm.request", context=context, kind=SpanKind.SERVER, start_time=self._ns(a.start),
                                 attributes=attrs)
        for name in ("queued", "admitted", "first_token", "last_token", "released"):
            at = getattr(a, name)
            if at is not None:
                span.add_event(name, timestamp=self._ns(at))
        child = set_span_in_context(span)
        for stage in a.stages:
            self._stage(tracer, child, stage)
        if a.status != "ok":
            span.set_status(Status(StatusCode.ERROR, a.cause))
        span.end(end_time=self._ns(a.end))

    def _vllm_request(self, run: Run, a: Attempt, resource: dict, context=None, service: str = "") -> None:
        """vLLM's span of one attempt; context: its parent (two layers: the gateway's call), service: its service
        (default the run's)."""
        service = service or run.service
        tracer = self._tracer(service, f"{service}-{a.instance + 1}", resource, vllm=True)
        seconds = lambda later, earlier: (later - earlier) / 1000.0  # noqa: E731
        span = tracer.start_span("llm_request", context=context, kind=SpanKind.SERVER, start_time=self._ns(a.queued),
                                 attributes={
            "gen_ai.latency.time_in_queue": seconds(a.admitted, a.queued),
            "gen_ai.latency.time_to_first_token": seconds(a.first_token, a.queued),
            "gen_ai.latency.e2e": seconds(a.last_token, a.queued),
            "gen_ai.latency.time_in_model_prefill": seconds(a.first_token, a.admitted),
            "gen_ai.latency.time_in_model_decode": seconds(a.last_token, a.first_token),
            "gen_ai.latency.time_in_model_inference": seconds(a.last_token, a.admitted),
            "gen_ai.usage.prompt_tokens": run.input_tokens, "gen_ai.usage.completion_tokens": run.output_tokens,
            "gen_ai.request.id": f"{run.id}-{a.number}", "gen_ai.request.max_tokens": 4096,
        })
        span.end(end_time=self._ns(a.released))

    def close(self) -> tuple[int, int]:
        """Flush everything; returns (spans exported, spans that failed to export)."""
        self.processor.shutdown()
        return self.processor.exported, self.processor.failed
