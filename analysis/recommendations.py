"""The fixes the seed texts recommend for each verdict, condensed, each with its source.

Sources: seed 000 "Why Your LLM Responses Are Slow" (five bottlenecks, "What usually helps"), seed 001 "What
causes high latency in LLM inference" (latency playbook), seed 002 "Why AI/LLM Inference Is Slow" (bucket
dominance triage), seed 003 "LLM Latency In Production: What Actually Works" (practical fixes), seed 004
"Latency Optimization in LLM Inference Systems" (production patterns).
"""

FIXES: dict[str, list[str]] = {
    "queue_backlog": [
        "Verify that in_flight stays near cap while the queue is non-zero; if it does, the backlog is a cap or an arrival spike: add capacity or raise the cap (seed 002, bucket dominance triage)",
        "Shorten batch wait windows and give interactive traffic its own lane, apart from long and heavy requests (seed 000, Bottleneck 4: Batching Misconfiguration)",
        "Enforce queue rejection before delay becomes meaningless: shed load with a degraded-mode response instead of unbounded waits (seed 000 Bottleneck 4; seed 004, Capacity, queues, and backpressure)",
        "Turn on continuous batching and autoscale on queue depth (seed 001, latency playbook)",
        "Per tenant quotas to prevent one noisy user from burning your GPU queue (seed 003, fix 10: Tail mitigation)",
    ],
    "admission_gap": [
        "Idle gaps under backlog (queue > 0 while in_flight < cap) mean the scheduler, networking or CPU parsing path is stalling: look there before adding capacity (seed 002, signatures)",
        "Move heavy parsing and validation off the socket-read executor and measure CPU time explicitly (seed 002, bucket dominance triage)",
        "Track queue depth separately from utilization: empty slots with a deep queue suggest scheduling bugs (seed 004, Cold start and warm pools)",
        "Check batch formation delay and shorten batch wait windows (seed 000, Bottleneck 4: Batching Misconfiguration)",
    ],
    "retry_amplification": [
        "Fix retry budgets and timeouts before adjusting concurrency (seed 002, bucket dominance triage)",
        "Timeouts and retries add load, which increases queueing, which creates more timeouts: cap retries per run and back off (seed 002, Common failure modes)",
        "Set explicit timeouts on every network hop and propagate cancellation to free slots (seed 004, Timeouts and cancellation)",
        "Circuit breakers around flaky tools; fall back to a cached or simpler path (seed 003, fix 10: Tail mitigation)",
        "Fail fast on budget overruns: return a partial answer with a fallback instead of spinning (seed 003, fix 1: Set a hard budget)",
    ],
    "preprocessing": [
        "Reduce prompt scaffolding and trim duplicated instructions (seed 000, Bottleneck 1: Tokenizer and Prompt Assembly)",
        "Move heavy prompt assembly out of the hot path where possible (seed 000, Bottleneck 1)",
        "Profile tokenizer concurrency, not just GPU usage; check whether token counting is duplicated in the gateway and the runtime (seed 000, Bottleneck 1)",
        "Pin the tokenizer to CPU and avoid reloading it at request time (seed 003, fix 8)",
        "System prompts longer than 1k tokens are a latency tax: shrink and version them (seed 003, fix 3: Kill prompt bloat)",
    ],
    "connection_churn": [
        "Use HTTP keep-alive, HTTP/2 or gRPC, and connection pools; enable TLS session resumption (seed 003, fix 7)",
        "Reuse connections on the client side and check the connection pool is not saturated (seed 004, Production Implementation Patterns; Dependency and platform hygiene)",
        "Compare t_first_token variability with new connections per success to confirm the churn (seed 002, How to verify)",
        "Enable DNS caching where you control the runtime (seed 003, fix 7)",
    ],
    "prefill_pressure": [
        "Split long and short prompts into separate lanes (seed 000, Bottleneck 2: KV Cache Misses)",
        "Reduce maximum context length for routes that do not need it (seed 000, Bottleneck 2)",
        "Cap concurrency before the runtime becomes unstable, and leave real GPU memory headroom (seed 000, Bottlenecks 2 and 3)",
        "Shorten prompts, enable prefix caching, use chunked prefill, and add warm replicas (seed 001, latency playbook: if TTFT is high)",
        "Set a hard context maximum and route long documents to an offline path (seed 003, Real trade offs and numbers)",
    ],
    "decode_throughput": [
        "Quantize, enable FlashAttention / optimized kernels, add speculative decoding, and consider tensor parallelism (seed 001, latency playbook: if inter-token latency is high)",
        "Cap max_tokens output: most products never need more than 256 to 512 tokens per turn (seed 003, fix 2)",
        "Use constrained decoding or JSON grammars to avoid meandering completions (seed 003, fix 3)",
        "Check output length and decode throughput before adding GPUs (seed 000, diagnostic flowchart)",
        "Watch per-token streaming speed: token rate sag is an early signal of throttling (seed 003, fix 9)",
    ],
    "post_processing": [
        "Treat parsing, validation and persistence as a throughput limiter: move heavy work off the socket-read executor and measure CPU time explicitly (seed 002, bucket dominance triage)",
        "Stream from the model to the client; do not buffer server side to stitch tool results unless you must (seed 003, fix 4)",
        "Parallelize tools with budgets and timeouts; return a partial answer and patch it later (seed 003, fix 5)",
        "Do not log full prompts synchronously on the hot path (seed 004, Inference hygiene checklist)",
    ],
    "network_overhead": [
        "Reduce unnecessary network hops and keep hot-path dependencies in the same zone or region (seed 000, Bottleneck 5: Network and Gateway Overhead)",
        "Simplify gateway logic for latency-sensitive routes and check the streaming proxy configuration (seed 000, Bottleneck 5)",
        "Profile retrieval and model serving together rather than separately (seed 000, Bottleneck 5)",
        "Keep the LLM runtime, vector DB and app in one region: cross-region RAG calls kill latency (seed 003, fix 7)",
        "Co-locate calling services and inference endpoints; measure RTT independently (seed 004, Geographic placement; Client and regional effects)",
    ],
    "healthy": [],
}

TENANT_FIXES = [
    "Per tenant quotas to prevent one noisy user from burning your GPU queue (seed 003, fix 10: Tail mitigation)",
    "Give interactive traffic its own lane, apart from heavy traffic (seed 000, Bottleneck 4: Batching Misconfiguration)",
]


def recommend(verdict: str, tenant_findings: bool = False) -> list[str]:
    """The seed fixes for a verdict (an empty list for healthy), plus tenant isolation when a tenant stands out."""
    fixes = list(FIXES[verdict])
    if tenant_findings:
        fixes += [fix for fix in TENANT_FIXES if fix not in fixes]
    return fixes
