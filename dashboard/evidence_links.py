"""Where the evidence behind each flowchart node, and behind each verdict, can be seen: (URL name, extra query)."""
from analysis.diagnosis.verdicts import REGISTRY

LINKS = {
    "queue_p95": [("scheduler", {}), ("runs", {"bucket": "t_queue"})],
    "queue_share": [("scheduler", {}), ("runs", {"bucket": "t_queue"})],
    "idle_slots": [("scheduler", {})],
    "retry_rate_backlog": [("runs", {"retried": "1"})],
    "retry_queue_spearman": [("runs", {"retried": "1"}), ("scheduler", {})],
    "prep_share": [("runs", {"bucket": "t_first_token"})],
    "post_share": [("runs", {"bucket": "t_post"})],
    "ttft_p95": [("overview", {}), ("runs", {"bucket": "ttft"})],
    "ttft_decode": [("prompts", {}), ("runs", {"bucket": "t_stream"})],
    "new_connections": [("connections", {})],
    "churn_spearman": [("connections", {})],
    "network_share": [("runs", {"bucket": "t_first_token"})],
    "prefill_ratio": [("prompts", {})],
    "decode_speed": [("prompts", {}), ("runs", {"bucket": "t_stream"})],
    "retry_rate": [("runs", {"retried": "1"})],
    "after_start": [("engine", {}), ("runs", {"bucket": "ttft"})],
    "kv_cache": [("engine", {})], "preemptions": [("engine", {})], "gpu_memory": [("engine", {})],
    "restarts": [("engine", {})], "gpu_busy": [("engine", {})], "queue_empty": [("engine", {})],
    "short_prompts_slow": [("prompts", {})], "prefix_cache_miss": [("engine", {}), ("prompts", {})],
    "engine_restarts": [("engine", {})], "memory_headroom": [("engine", {})],
    "failing_attempts": [("runs", {"retried": "1"})],
    "gateway_share": [("service-map", {})],
}
TITLES = {"scheduler": "scheduler", "runs": "runs", "overview": "overview", "prompts": "prompt length",
          "connections": "connections", "tenants": "tenants", "engine": "engine", "service-map": "service map"}


def verdict_pages(code: str) -> list[tuple[str, dict]]:
    """The pages of a verdict's evidence: its record's (analysis.diagnosis.verdicts); [] for a code not registered
    (a stored diagnosis may be older than a verdict's removal)."""
    return list(REGISTRY[code].pages) if code in REGISTRY else []
