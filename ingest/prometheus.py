"""Prometheus text exposition -> an OTLP ExportMetricsServiceRequest, parsed by prometheus_client.

Families map as a Collector's prometheus receiver maps them: gauge/untyped/info -> Gauge; counter -> a
cumulative monotonic Sum named as the sample is exposed (`vllm:num_preemptions_total`); histogram -> a
cumulative Histogram (bounds from `le`, +Inf last); summary -> its quantiles as Gauges (attribute `quantile`)
and its _count/_sum as Sums. `_created` samples are not data: they set the start time of their series.
"""
import math
from collections import defaultdict

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import AGGREGATION_TEMPORALITY_CUMULATIVE
from prometheus_client.parser import text_string_to_metric_families

NS = 1_000_000_000


def to_request(text: str, resource: dict, now_ns: int, start_ns: int) -> tuple[ExportMetricsServiceRequest, int]:
    """(the request, its number of data points). Raises ValueError for text prometheus_client cannot parse.

    `start_ns` starts every cumulative series whose `_created` sample does not say otherwise."""
    request = ExportMetricsServiceRequest()
    rm = request.resource_metrics.add()
    rm.resource.attributes.extend(_attributes(resource))
    scope = rm.scope_metrics.add()
    scope.scope.name = "latency_obs.scrape"
    points = 0
    for family in text_string_to_metric_families(text):
        points += _family(scope.metrics, family, now_ns, start_ns)
    return request, points


def _attributes(labels: dict) -> list[KeyValue]:
    out = []
    for key, value in sorted(labels.items()):
        kv = KeyValue(key=key)
        kv.value.string_value = str(value)
        out.append(kv)
    return out


def _time(sample, now_ns: int) -> int:
    return int(float(sample.timestamp) * NS) if sample.timestamp is not None else now_ns


def _family(metrics, family, now_ns: int, start_ns: int) -> int:
    if family.type == "histogram":
        return _histogram(metrics, family, now_ns, start_ns)
    created = {_key(s.labels): int(s.value * NS) for s in family.samples if s.name.endswith("_created")}
    count = 0
    for sample in family.samples:
        if sample.name.endswith("_created") or not math.isfinite(sample.value):
            continue  # NaN is a staleness marker, not a value
        is_sum = family.type == "counter" or (family.type == "summary" and sample.name.endswith(("_count", "_sum")))
        metric = metrics.add(name=sample.name, description=family.documentation, unit=family.unit or "")
        if is_sum:
            metric.sum.aggregation_temporality = AGGREGATION_TEMPORALITY_CUMULATIVE
            metric.sum.is_monotonic = True
            point = metric.sum.data_points.add()
            point.start_time_unix_nano = created.get(_key(sample.labels), start_ns)
        else:
            point = metric.gauge.data_points.add()
        point.time_unix_nano = _time(sample, now_ns)
        point.as_double = float(sample.value)
        point.attributes.extend(_attributes(sample.labels))
        count += 1
    return count


def _key(labels: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in labels.items() if k != "le"))


def _histogram(metrics, family, now_ns: int, start_ns: int) -> int:
    series = defaultdict(lambda: {"buckets": [], "count": None, "sum": 0.0, "time": now_ns, "start": start_ns})
    for sample in family.samples:
        one = series[_key(sample.labels)]
        one["time"] = _time(sample, now_ns)
        if sample.name.endswith("_bucket"):
            one["buckets"].append((float(sample.labels["le"]), sample.value))
        elif sample.name.endswith("_count"):
            one["count"] = sample.value
        elif sample.name.endswith("_sum"):
            one["sum"] = sample.value
        elif sample.name.endswith("_created"):
            one["start"] = int(sample.value * NS)
    metric = metrics.add(name=family.name, description=family.documentation, unit=family.unit or "")
    metric.histogram.aggregation_temporality = AGGREGATION_TEMPORALITY_CUMULATIVE
    for labels, one in series.items():
        cumulative = sorted(one["buckets"])
        point = metric.histogram.data_points.add(time_unix_nano=one["time"], start_time_unix_nano=one["start"])
        point.attributes.extend(_attributes(dict(labels)))
        point.explicit_bounds.extend(le for le, _ in cumulative if math.isfinite(le))
        previous = 0.0
        for _, value in cumulative:  # cumulative counts per `le` -> counts per bucket
            point.bucket_counts.append(int(max(value - previous, 0)))
            previous = value
        if cumulative and math.isfinite(cumulative[-1][0]):
            point.bucket_counts.append(0)  # no +Inf bucket exposed: the overflow bucket is empty
        point.count = int(one["count"] if one["count"] is not None else previous)
        point.sum = float(one["sum"])
    return len(series)
