"""The simulated engine's metrics, named as vLLM, DCGM, kube-state-metrics and the Prometheus client name them.

Sampled every `interval_s` from the attempts the model produced (simulator.model), so the gauges say exactly what
the spans say: running = attempts admitted and not yet ended, waiting = queued and not yet admitted. No random
number is drawn, so sending metrics changes no span. Exported with the OpenTelemetry SDK's own metric exporter
classes (OTLP/HTTP or gRPC): the SDK's instruments cannot stamp past instants, so the points are built as SDK
MetricsData with the simulated timestamps and handed to exporter.export().
"""
from collections import defaultdict

from opentelemetry.sdk.metrics.export import (
    AggregationTemporality, Gauge, Metric, MetricsData, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

NS_PER_MS = 1_000_000
FB_TOTAL_MIB = 81920.0  # an 80 GB GPU
KV_TOKENS_PER_SLOT = 6000  # the nominal KV pool per slot when the scenario sets no capacity
SCOPE = InstrumentationScope("latency_obs.simulator.engine")


def make_metric_exporter(endpoint: str, key: str, protocol: str):
    """The SDK's OTLP metric exporter for a traces endpoint (http://host:port/v1/traces or host:port for gRPC)."""
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter(endpoint=endpoint.split("://", 1)[-1], insecure=True,
                                  headers=(("authorization", f"Bearer {key}"),), timeout=60)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter(endpoint=endpoint.replace("/v1/traces", "/v1/metrics"),
                              headers={"Authorization": f"Bearer {key}"}, timeout=60)


class EngineMetrics:
    """Collects attempts while runs are emitted; export() samples and sends the whole stretch."""

    def __init__(self, scenario, service: str, base_ns: int, start_ms: float, duration_s: float,
                 interval_s: float = 10.0):
        self.s, self.service, self.base_ns = scenario, service, base_ns
        self.start_ms, self.end_ms, self.interval_ms = start_ms, start_ms + duration_s * 1000.0, interval_s * 1000.0
        self.attempts = defaultdict(list)  # instance index -> attempts

    def observe(self, run) -> None:
        for attempt in run.attempts:
            self.attempts[attempt.instance].append(attempt)

    def samples(self, index: int) -> list[tuple[float, dict]]:
        """(simulated ms, {metric name: value}) every interval while the instance serves."""
        s, attempts = self.s, self.attempts[index]
        started = self.start_ms + (s.late_instance_s * 1000.0 if s.late_instance_s > 0 and index == s.instances - 1
                                   else 0.0)
        capacity = s.kv_capacity_tokens or s.cap * KV_TOKENS_PER_SLOT
        out, t = [], started + self.interval_ms
        while t <= self.end_ms:
            running = [a for a in attempts if a.admitted is not None and a.admitted <= t < a.end]
            waiting = sum(1 for a in attempts if a.start <= t < (a.admitted if a.admitted is not None else a.end))
            kv = sum(a.run.input_tokens + (a.run.output_tokens if a.first_token is not None and a.first_token <= t
                                            else 0) for a in running if a.engine_at is not None and a.engine_at <= t)
            usage = min(kv / capacity, 1.0)
            begun = [a for a in attempts if a.engine_at is not None and a.engine_at <= t]
            queries = float(sum(a.run.input_tokens for a in begun))
            restarts, process_start = self._restarts(index, started, t)
            util = min(100.0, 100.0 * (0.04 + s.gpu_busy * len(running) / s.cap))
            used = FB_TOTAL_MIB * min(s.fb_used_share + 0.01 * usage, 0.999)
            out.append((t, {
                "vllm:num_requests_running": float(len(running)), "vllm:num_requests_waiting": float(waiting),
                "vllm:kv_cache_usage_perc": usage,
                "vllm:num_preemptions_total": float(sum(a.preempted for a in begun)),
                "vllm:prefix_cache_queries_total": queries,
                "vllm:prefix_cache_hits_total": float(int(queries * s.prefix_hit_rate)),
                "DCGM_FI_DEV_GPU_UTIL": round(util), "DCGM_FI_DEV_FB_USED": round(used),
                "DCGM_FI_DEV_FB_FREE": round(FB_TOTAL_MIB - used),
                "process_start_time_seconds": (self.base_ns / 1e9) + process_start / 1000.0,
                "kube_pod_container_status_restarts_total": float(restarts),
            }))
            t += self.interval_ms
        return out

    def _restarts(self, index: int, started: float, t: float) -> tuple[int, float]:
        """(restarts so far, the current process's start) of an instance: each restarts every restart_every_s,
        the instances in turn."""
        every = self.s.restart_every_s * 1000.0
        if every <= 0:
            return 0, started
        first = started + every * (index + 1) / self.s.instances
        count = 0 if t < first else int((t - first) // every) + 1
        return count, (first + (count - 1) * every) if count else started

    def metrics_data(self) -> list[MetricsData]:
        """One MetricsData per instance, with every sample of the stretch."""
        out = []
        for index in sorted(self.attempts):
            series = defaultdict(list)
            for t, values in self.samples(index):
                for name, value in values.items():
                    series[name].extend(NumberDataPoint(attributes=labels,
                                                        start_time_unix_nano=self.base_ns + int(self.start_ms * NS_PER_MS),
                                                        time_unix_nano=self.base_ns + int(t * NS_PER_MS), value=value)
                                        for labels in self._labels(name, index))
            resource = Resource.create({"service.name": self.service,
                                        "service.instance.id": f"{self.service}-{index + 1}", **self.s.resource(index)})
            metrics = [_metric(name, points) for name, points in series.items()]
            out.append(MetricsData([ResourceMetrics(resource, [ScopeMetrics(SCOPE, metrics, "")], "")]))
        return out

    def _labels(self, name: str, index: int) -> list[dict]:
        """The label sets of one metric's series: with Scenario.gpus, a DCGM metric has one series per GPU (labels
        gpu and UUID, as dcgm-exporter sends them), each with the instance's value."""
        if self.s.gpus > 0 and name.startswith("DCGM_"):
            return [{"gpu": str(g), "UUID": f"GPU-sim-{index + 1}-{g}"} for g in range(self.s.gpus)]
        return [{"model_name": "simulated"}]

    def export(self, exporter) -> int:
        """Send every instance's series; returns the number of points sent."""
        sent = 0
        for data in self.metrics_data():
            exporter.export(data)
            sent += sum(len(m.data.data_points) for rm in data.resource_metrics for sm in rm.scope_metrics
                        for m in sm.metrics)
        return sent


def _metric(name: str, points: list) -> Metric:
    if name.endswith("_total"):
        data = Sum(points, AggregationTemporality.CUMULATIVE, is_monotonic=True)
    else:
        data = Gauge(points)
    return Metric(name=name, description="", unit="", data=data)
