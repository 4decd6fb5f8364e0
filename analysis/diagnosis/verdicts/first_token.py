"""The verdicts of time to the first token: the prompt's preparation, the connection, the network, then the TTFT
leaves (prefill, cold starts, the engine's KV cache, GPU memory and batching) and what stays unexplained."""
from analysis.diagnosis.verdicts.record import (B1, B2, B3, B4, B5, CONVENTION, FLOWCHART, PLAYBOOK, SAME_PLACE,
                                                Verdict, fix)

ENGINE, PROMPTS = ("engine", {}), ("prompts", {})

VERDICTS = [
    Verdict(
        "preprocessing", nodes=("prep_share",), thresholds=("prep_share",), present=(("prep_share",),),
        bucket="t_first_token", parts=("prep",), pages=(("runs", {"bucket": "t_first_token"}),),
        fixes=(
            fix("Reduce prompt scaffolding and trim duplicated instructions", ("000", B1)),
            fix("Move heavy prompt assembly out of the hot path where possible", ("000", B1)),
            fix("Profile tokenizer concurrency, not just GPU usage; check whether token counting is duplicated in the "
                "gateway and the runtime", ("000", B1)),
            fix("Pin the tokenizer to CPU and avoid reloading it at request time",
                ("003", "Fix 8: Choose a serving stack that respects interactivity")),
            fix("System prompts longer than 1k tokens are a latency tax: shrink and version them",
                ("003", "Fix 3: Kill prompt bloat")),
        )),
    Verdict(
        "connection_churn", nodes=("churn_spearman",), thresholds=("churn_spearman", "new_connections_per_success"),
        present=(("new_connections", "churn_spearman"),), bucket="ttft", parts=("t_conn", "churn_first_token"),
        pages=(("connections", {}),),
        fixes=(
            fix("Use HTTP keep-alive, HTTP/2 or gRPC, and connection pools; enable TLS session resumption",
                ("003", SAME_PLACE)),
            fix("Reuse connections on the client side and check the connection pool is not saturated",
                ("004", "Production Implementation Patterns"), ("004", "Dependency and platform hygiene")),
            fix("Compare t_first_token variability with new connections per success to confirm the churn",
                ("002", "How to verify")),
            fix("Enable DNS caching where you control the runtime", ("003", SAME_PLACE)),
        )),
    # t_network_total: across layers, a gateway call's total minus the engine's (analysis.incidents.causes.layered)
    Verdict(
        "network_overhead", nodes=("network_share",), thresholds=("network_share",), present=(("network_share",),),
        bucket="t_first_token", parts=("network", "t_network_total"),
        pages=(("runs", {"bucket": "t_first_token"}), ("service-map", {})),
        fixes=(
            fix("Reduce unnecessary network hops and keep hot-path dependencies in the same zone or region",
                ("000", B5)),
            fix("Simplify gateway logic for latency-sensitive routes and check the streaming proxy configuration",
                ("000", B5)),
            fix("Profile retrieval and model serving together rather than separately", ("000", B5)),
            fix("Keep the LLM runtime, vector DB and app in one region: cross-region RAG calls kill latency",
                ("003", SAME_PLACE)),
            fix("Co-locate calling services and inference endpoints; measure RTT independently",
                ("004", "Geographic placement"), ("004", "Client and regional effects")),
        )),
    # TRICKY: prefill pressure grows with prompt length by definition (its node compares segments), so the long-prompt
    # segment carrying its excess is the cause's signature, not a part of the traffic it is confined to.
    Verdict(
        "prefill_pressure", nodes=("prefill_ratio", "prefix_cache_miss"),
        thresholds=("prefill_ratio", "prefix_cache_miss_rate", "ttft_p95_ms"),
        present=(("ttft_p95", "prefill_ratio"), ("ttft_p95", "prefix_cache_miss")), bucket="t_first_token",
        signatures=("segment",), parts=("first_token_rest",), pages=(PROMPTS,), second_hand=True,
        fixes=(
            fix("Split long and short prompts into separate lanes", ("000", B2)),
            fix("Reduce maximum context length for routes that do not need it", ("000", B2)),
            fix("Cap concurrency before the runtime becomes unstable, and leave real GPU memory headroom",
                ("000", B2), ("000", B3)),
            fix("Shorten prompts, enable prefix caching, use chunked prefill, and add warm replicas",
                ("001", PLAYBOOK + " (if TTFT is high)")),
            fix("Set a hard context maximum and route long documents to an offline path",
                ("003", "Real trade offs and numbers")),
        )),
    Verdict(
        "cold_start", nodes=("after_start",), thresholds=("cold_start_share", "ttft_p95_ms"),
        present=(("ttft_p95", "after_start"),), pages=(ENGINE, ("runs", {"bucket": "ttft"})),
        fixes=(
            fix("Keep minimum instances or pre-warmed pools so a scale-up does not put users on a cold replica",
                ("004", "Cold start and warm pools")),
            fix("Load weights ahead of traffic: warm a new replica with synthetic requests before the router sends it "
                "users, and keep models resident", ("001", "Cause 4: Cold starts and model loading")),
            fix("Check cold starts before tuning the model: they show as TTFT outliers right after a replica starts",
                ("000", FLOWCHART)),
        )),
    Verdict(
        "kv_cache_pressure", nodes=("preemptions",),
        thresholds=("preemptions_per_min", "ttft_p95_ms", "kv_cache_usage"),
        present=(("ttft_p95", "kv_cache", "preemptions"),), pages=(ENGINE,),
        fixes=(
            fix("Cap concurrency before the runtime becomes unstable (fewer active sequences per replica)",
                ("000", B2)),
            fix("Split long and short prompts into separate lanes and reduce maximum context length for routes that "
                "do not need it", ("000", B2)),
            fix("Right-size the model to the GPU instead of operating on the edge of memory; watch active sequence "
                "count and cache pressure metrics", ("000", B2)),
            fix("Use paged KV cache management and prefix caching so requests do not recompute state",
                ("001", PLAYBOOK + " (if TTFT is high)")),
        )),
    Verdict(
        "gpu_memory_pressure", nodes=("gpu_memory", "restarts", "engine_restarts", "failing_attempts"),
        thresholds=("gpu_memory_used_share", "restarts", "failed_attempt_share", "ttft_p95_ms"),
        present=(("ttft_p95", "gpu_memory"), ("ttft_p95", "restarts"), ("engine_restarts",),
                 ("memory_headroom", "failing_attempts")), pages=(ENGINE,),
        fixes=(
            fix("Leave real memory headroom: lower gpu_memory_utilization and active sequence caps", ("000", B3)),
            fix("Isolate large-context traffic from short interactive requests", ("000", B3)),
            fix("Check VRAM usage over time (not averages) and the pod restart and OOM history", ("000", B3)),
            fix("Use a smaller or more appropriate model class for the route", ("000", B3)),
        )),
    Verdict(
        "batching_delay", nodes=("short_prompts_slow",),
        thresholds=("short_prompt_ttft_p50_ms", "ttft_p95_ms", "gpu_utilization", "queue_empty_share"),
        present=(("ttft_p95", "gpu_busy", "queue_empty", "short_prompts_slow"),), pages=(ENGINE, PROMPTS),
        fixes=(
            fix("High utilization with empty queues suggests batching misconfiguration: shorten batch wait windows",
                ("004", "Cold start and warm pools"), ("000", B4)),
            fix("Give interactive traffic its own batching lane; do not tune max batch size for throughput alone",
                ("000", B4)),
            fix("Watch batch formation delay and batch size versus TTFT, not only GPU utilisation", ("000", B4)),
        )),
    # Not seed fixes: the TTFT branch ended with nothing measured to explain it (docs/diagnosis.md).
    Verdict(
        "ttft_unexplained", nodes=("prefix_cache_miss",), thresholds=("prefix_cache_miss_rate",),
        pages=(("runs", {"bucket": "ttft"}), ENGINE), explains_tail=False, second_hand=True,
        fixes=(
            fix("Send the engine's metrics (vLLM /metrics, SGLang, TGI, NVIDIA DCGM): KV cache, preemptions, GPU "
                "memory and utilisation, queue depth and process start answer the questions this diagnosis could not",
                ("readme", "Engine metrics")),
            fix("Set the prompt token count on attempt spans (gen_ai.usage.input_tokens) so TTFT can be compared "
                "across prompt lengths", ("readme", CONVENTION)),
            fix("Seed 000's leaf for high TTFT with decode normal: check KV cache, GPU memory and cold starts",
                ("000", FLOWCHART)),
        )),
]
