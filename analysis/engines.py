"""Which metric of which serving engine feeds which signal: THE mapping of known engines (docs/sending-traces.md "7. Engine and GPU metrics").

Names are matched as they arrive from the engine's /metrics through our scraper or a Collector's prometheus
receiver (counters with or without `_total`), and with `:` or `.` as separator for OTel SDK exporters (whose
instrument names cannot hold `:`). Every series is per instance: (service.name, service.instance.id, else
k8s.pod.name, else host.name) -- the same key as the traces' instance.
"""
from dataclasses import dataclass

# how a signal's series is read: a gauge averaged per minute, or a counter's increase per minute
GAUGE, COUNTER = "gauge", "counter"


@dataclass(frozen=True)
class Source:
    engine: str
    name: str
    read: str = GAUGE
    scale: float = 1.0  # to the signal's unit: fractions 0..1, bytes, seconds


SIGNALS: dict[str, tuple[Source, ...]] = {
    "queue_depth": (Source("vllm", "vllm:num_requests_waiting"), Source("sglang", "sglang:num_queue_reqs"),
                    Source("tgi", "tgi_queue_size")),
    "in_flight": (Source("vllm", "vllm:num_requests_running"), Source("sglang", "sglang:num_running_reqs"),
                  Source("tgi", "tgi_batch_current_size")),
    # vLLM's *_perc gauges are fractions 0..1 despite the name; v0 called it gpu_cache_usage_perc
    "kv_cache_usage": (Source("vllm", "vllm:kv_cache_usage_perc"), Source("vllm", "vllm:gpu_cache_usage_perc"),
                       Source("sglang", "sglang:token_usage")),
    "preemptions": (Source("vllm", "vllm:num_preemptions_total", COUNTER), Source("vllm", "vllm:num_preemptions", COUNTER)),
    "prefix_cache_queries": (Source("vllm", "vllm:prefix_cache_queries_total", COUNTER),
                             Source("vllm", "vllm:prefix_cache_queries", COUNTER)),
    "prefix_cache_hits": (Source("vllm", "vllm:prefix_cache_hits_total", COUNTER),
                          Source("vllm", "vllm:prefix_cache_hits", COUNTER)),
    "prefix_cache_hit_rate": (Source("vllm", "vllm:gpu_prefix_cache_hit_rate"), Source("sglang", "sglang:cache_hit_rate")),
    "gpu_utilization": (Source("dcgm", "DCGM_FI_DEV_GPU_UTIL", scale=0.01),),
    "gpu_memory_used_bytes": (Source("dcgm", "DCGM_FI_DEV_FB_USED", scale=1024 * 1024),),  # DCGM reports MiB
    "gpu_memory_free_bytes": (Source("dcgm", "DCGM_FI_DEV_FB_FREE", scale=1024 * 1024),),
    "process_start": (Source("process", "process_start_time_seconds"),),
    "restarts": (Source("kube-state", "kube_pod_container_status_restarts_total", COUNTER),
                 Source("kube-state", "kube_pod_container_status_restarts", COUNTER)),
}
# The engine's own TTFT and queue-time histograms (shown beside the traces' figures, not used by the flowchart)
HISTOGRAMS = {"ttft_seconds": "vllm:time_to_first_token_seconds", "queue_seconds": "vllm:request_queue_time_seconds"}


def spellings(name: str) -> tuple[str, ...]:
    """A metric name as it may arrive: as exposed, and with `.`/`_` for `:` (OTel SDK instrument names)."""
    return tuple(dict.fromkeys((name, name.replace(":", "."), name.replace(":", "_"))))


def names_by_signal() -> dict[str, tuple[str, ...]]:
    return {signal: tuple(n for s in sources for n in spellings(s.name)) for signal, sources in SIGNALS.items()}


def source_of(name: str) -> tuple[str, Source] | None:
    """(signal, source) of a stored metric name, None for a name no engine of the table uses."""
    for signal, sources in SIGNALS.items():
        for source in sources:
            if name in spellings(source.name):
                return signal, source
    return None


def engines(names) -> tuple[str, ...]:
    """The engines recognised from the metric names present, in table order."""
    found = {hit[1].engine for hit in map(source_of, names) if hit}
    order = [s.engine for sources in SIGNALS.values() for s in sources]
    return tuple(dict.fromkeys(e for e in order if e in found))
