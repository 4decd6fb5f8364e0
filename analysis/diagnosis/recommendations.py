"""The fixes the seed texts recommend for each verdict, condensed, each citing its source as a readable title.

A recommendation is {"text", "why", "source"}: the fix, the finding it answers ("because t_queue p95 25.7 s is
above 1 s and gap_fraction 0% is below 50%", written by analysis.diagnosis.flowchart), and where it comes from as
"<seed title> — <section>" (the seed texts in /work/shared/seeds; SOURCES below), never a seed number.
"""
SOURCES = {
    "000": "Why Your LLM Responses Are Slow",
    "001": "What causes high latency in LLM inference and how do you fix it?",
    "002": "Why AI/LLM Inference Is Slow",
    "003": "LLM Latency In Production: What Actually Works",
    "004": "Latency Optimization in LLM Inference Systems",
    "readme": "latency_obs docs",
}
# Section names as the seeds spell them (seed 003's practical fixes are numbered; seed 000's bottlenecks too).
B1, B2, B4, B5 = ("Bottleneck 1: Tokenizer and Prompt Assembly", "Bottleneck 2: KV Cache Misses or Poor Cache Behavior",
                  "Bottleneck 4: Batching Misconfiguration", "Bottleneck 5: Network and Gateway Overhead")
TRIAGE, SIGNATURES = "Mechanism: bucket dominance triage", "Mechanism: idle gaps under backlog"
PLAYBOOK = "Putting it together: a latency playbook"


def fix(text: str, *cited: tuple[str, str]) -> dict:
    """{"text", "source"}: cited are (seed, section) pairs, shown as "<title> — <section>", joined by "; "."""
    return {"text": text, "source": "; ".join(f"{SOURCES[seed]} — {section}" for seed, section in cited)}


FIXES: dict[str, list[dict]] = {
    "queue_backlog": [
        fix("Verify that in_flight stays near cap while the queue is non-zero; if it does, the backlog is a cap or an "
            "arrival spike: add capacity or raise the cap", ("002", TRIAGE)),
        fix("Shorten batch wait windows and give interactive traffic its own lane, apart from long and heavy requests",
            ("000", B4)),
        fix("Enforce queue rejection before delay becomes meaningless: shed load with a degraded-mode response "
            "instead of unbounded waits", ("000", B4), ("004", "Capacity, queues, and backpressure")),
        fix("Turn on continuous batching and autoscale on queue depth", ("001", PLAYBOOK)),
    ],
    "admission_gap": [
        fix("Idle gaps under backlog (queue > 0 while in_flight < cap) mean the scheduler, networking or CPU parsing "
            "path is stalling: look there before adding capacity", ("002", SIGNATURES)),
        fix("Move heavy parsing and validation off the socket-read executor and measure CPU time explicitly",
            ("002", TRIAGE)),
        fix("Track queue depth separately from utilization: empty slots with a deep queue suggest scheduling bugs",
            ("004", "Cold start and warm pools")),
        fix("Check batch formation delay and shorten batch wait windows", ("000", B4)),
    ],
    "retry_amplification": [
        fix("Fix retry budgets and timeouts before adjusting concurrency", ("002", TRIAGE)),
        fix("Timeouts and retries add load, which increases queueing, which creates more timeouts: cap retries per "
            "run and back off", ("002", "Common failure modes")),
        fix("Set explicit timeouts on every network hop and propagate cancellation to free slots",
            ("004", "Timeouts and cancellation")),
        fix("Circuit breakers around flaky tools; fall back to a cached or simpler path",
            ("003", "Fix 10: Tail mitigation")),
        fix("Fail fast on budget overruns: return a partial answer with a fallback instead of spinning",
            ("003", "Fix 1: Set a hard budget and enforce it in code")),
    ],
    "preprocessing": [
        fix("Reduce prompt scaffolding and trim duplicated instructions", ("000", B1)),
        fix("Move heavy prompt assembly out of the hot path where possible", ("000", B1)),
        fix("Profile tokenizer concurrency, not just GPU usage; check whether token counting is duplicated in the "
            "gateway and the runtime", ("000", B1)),
        fix("Pin the tokenizer to CPU and avoid reloading it at request time",
            ("003", "Fix 8: Choose a serving stack that respects interactivity")),
        fix("System prompts longer than 1k tokens are a latency tax: shrink and version them",
            ("003", "Fix 3: Kill prompt bloat")),
    ],
    "connection_churn": [
        fix("Use HTTP keep-alive, HTTP/2 or gRPC, and connection pools; enable TLS session resumption",
            ("003", "Fix 7: Put compute and data in the same place")),
        fix("Reuse connections on the client side and check the connection pool is not saturated",
            ("004", "Production Implementation Patterns"), ("004", "Dependency and platform hygiene")),
        fix("Compare t_first_token variability with new connections per success to confirm the churn",
            ("002", "How to verify")),
        fix("Enable DNS caching where you control the runtime",
            ("003", "Fix 7: Put compute and data in the same place")),
    ],
    "prefill_pressure": [
        fix("Split long and short prompts into separate lanes", ("000", B2)),
        fix("Reduce maximum context length for routes that do not need it", ("000", B2)),
        fix("Cap concurrency before the runtime becomes unstable, and leave real GPU memory headroom",
            ("000", B2), ("000", "Bottleneck 3: GPU Memory Pressure")),
        fix("Shorten prompts, enable prefix caching, use chunked prefill, and add warm replicas",
            ("001", PLAYBOOK + " (if TTFT is high)")),
        fix("Set a hard context maximum and route long documents to an offline path",
            ("003", "Real trade offs and numbers")),
    ],
    "decode_throughput": [
        fix("Quantize, enable FlashAttention / optimized kernels, add speculative decoding, and consider tensor "
            "parallelism", ("001", PLAYBOOK + " (if inter-token latency is high)")),
        fix("Cap max_tokens output: most products never need more than 256 to 512 tokens per turn",
            ("003", "Fix 2: Pick the smallest viable model for each job")),
        fix("Use constrained decoding or JSON grammars to avoid meandering completions",
            ("003", "Fix 3: Kill prompt bloat")),
        fix("Check output length and decode throughput before adding GPUs", ("000", "the diagnostic flowchart")),
        fix("Watch per-token streaming speed: token rate sag is an early signal of throttling",
            ("003", "Fix 9: Use provider features that actually help")),
    ],
    "post_processing": [
        fix("Treat parsing, validation and persistence as a throughput limiter: move heavy work off the socket-read "
            "executor and measure CPU time explicitly", ("002", TRIAGE)),
        fix("Stream from the model to the client; do not buffer server side to stitch tool results unless you must",
            ("003", "Fix 4: Stream like you mean it")),
        fix("Parallelize tools with budgets and timeouts; return a partial answer and patch it later",
            ("003", "Fix 5: Parallelize retrieval and tools")),
        fix("Do not log full prompts synchronously on the hot path", ("004", "Inference hygiene checklist")),
    ],
    "network_overhead": [
        fix("Reduce unnecessary network hops and keep hot-path dependencies in the same zone or region", ("000", B5)),
        fix("Simplify gateway logic for latency-sensitive routes and check the streaming proxy configuration",
            ("000", B5)),
        fix("Profile retrieval and model serving together rather than separately", ("000", B5)),
        fix("Keep the LLM runtime, vector DB and app in one region: cross-region RAG calls kill latency",
            ("003", "Fix 7: Put compute and data in the same place")),
        fix("Co-locate calling services and inference endpoints; measure RTT independently",
            ("004", "Geographic placement"), ("004", "Client and regional effects")),
    ],
    "gateway_overhead": [
        fix("Simplify gateway logic for latency-sensitive routes: auth and quota checks, routing and logging on the hot "
            "path add latency that has nothing to do with the model", ("000", B5)),
        fix("Check the streaming proxy configuration: a gateway that buffers the response adds its whole length to the "
            "first token", ("000", B5)),
        fix("Do not log full prompts synchronously on the hot path", ("004", "Inference hygiene checklist")),
    ],
    "cold_start": [
        fix("Keep minimum instances or pre-warmed pools so a scale-up does not put users on a cold replica",
            ("004", "Cold start and warm pools")),
        fix("Load weights ahead of traffic: warm a new replica with synthetic requests before the router sends it "
            "users, and keep models resident", ("001", "Cause 4: Cold starts and model loading")),
        fix("Check cold starts before tuning the model: they show as TTFT outliers right after a replica starts",
            ("000", "the diagnostic flowchart")),
    ],
    "kv_cache_pressure": [
        fix("Cap concurrency before the runtime becomes unstable (fewer active sequences per replica)", ("000", B2)),
        fix("Split long and short prompts into separate lanes and reduce maximum context length for routes that do "
            "not need it", ("000", B2)),
        fix("Right-size the model to the GPU instead of operating on the edge of memory; watch active sequence "
            "count and cache pressure metrics", ("000", B2)),
        fix("Use paged KV cache management and prefix caching so requests do not recompute state",
            ("001", PLAYBOOK + " (if TTFT is high)")),
    ],
    "gpu_memory_pressure": [
        fix("Leave real memory headroom: lower gpu_memory_utilization and active sequence caps",
            ("000", "Bottleneck 3: GPU Memory Pressure")),
        fix("Isolate large-context traffic from short interactive requests", ("000", "Bottleneck 3: GPU Memory Pressure")),
        fix("Check VRAM usage over time (not averages) and the pod restart and OOM history",
            ("000", "Bottleneck 3: GPU Memory Pressure")),
        fix("Use a smaller or more appropriate model class for the route", ("000", "Bottleneck 3: GPU Memory Pressure")),
    ],
    "batching_delay": [
        fix("High utilization with empty queues suggests batching misconfiguration: shorten batch wait windows",
            ("004", "Cold start and warm pools"), ("000", B4)),
        fix("Give interactive traffic its own batching lane; do not tune max batch size for throughput alone",
            ("000", B4)),
        fix("Watch batch formation delay and batch size versus TTFT, not only GPU utilisation", ("000", B4)),
    ],
    # Not a seed fix: the TTFT branch ended with nothing measured to explain it (docs/diagnosis.md).
    "ttft_unexplained": [
        fix("Send the engine's metrics (vLLM /metrics, SGLang, TGI, NVIDIA DCGM): KV cache, preemptions, GPU memory "
            "and utilisation, queue depth and process start answer the questions this diagnosis could not",
            ("readme", "Engine metrics")),
        fix("Set the prompt token count on attempt spans (gen_ai.usage.input_tokens) so TTFT can be compared across "
            "prompt lengths", ("readme", "The span convention")),
        fix("Seed 000's leaf for high TTFT with decode normal: check KV cache, GPU memory and cold starts",
            ("000", "the diagnostic flowchart")),
    ],
    "healthy": [],
    # Not a seed fix: what the spans must carry before the flowchart can tell healthy from slow (docs/diagnosis.md).
    "insufficient_data": [
        fix("Send the lifecycle events on each attempt span (queued, admitted, first_token, last_token, released) and "
            "the token counts, as docs/span-convention.md describes; the coverage strip on every page shows "
            "what is missing", ("readme", "The span convention")),
        fix("A client instrumentation gives TTFT only for a call it saw stream (a first-chunk time: "
            "gen_ai.response.time_to_first_chunk, OpenLIT's gen_ai.server.time_to_first_token with "
            "gen_ai.request.stream, OpenLLMetry's chunk events): if your calls stream, check that the instrumentation "
            "records it (LiteLLM: LITELLM_OTEL_V2=true; the official openai-v2 and LangChain's instrumentations record "
            "no first chunk: OpenLLMetry's or OpenInference's openai instrumentation does); if they do not, TTFT is "
            "the whole call and only a first_token event from the server can split it",
            ("readme", "The span convention")),
    ],
}

# Isolation fixes: recommended only beside a tenant finding (an outlier or a noisy neighbour), whatever the verdict.
TENANT_FIXES = [
    fix("Per tenant quotas to prevent one noisy user from burning your GPU queue", ("003", "Fix 10: Tail mitigation")),
    fix("Give interactive traffic its own lane, apart from heavy traffic", ("000", B4)),
]


def recommend(verdict: str, tenant_findings: list[dict] | bool = (), why: str = "") -> list[dict]:
    """The seed fixes for a verdict (none for healthy), each with `why` (the finding it answers; "because the
    verdict is <verdict>" when the caller has none), plus the tenant fixes when tenant_findings holds a finding
    (their why: the first finding's message). A bare True (no messages) still adds them, with a generic why."""
    because = why or f"because the verdict is {verdict}"
    fixes = [{**f, "why": because} for f in FIXES[verdict]]
    if tenant_findings:
        first = tenant_findings[0]["message"] if isinstance(tenant_findings, list) else "a tenant stands out"
        texts = {f["text"] for f in fixes}
        fixes += [{**f, "why": f"because {first}"} for f in TENANT_FIXES if f["text"] not in texts]
    return fixes


def data_fixes(gaps: list[str]) -> list[dict]:
    """What to send when the flowchart cannot decide (analysis.diagnosis.flowchart.missing), as recommendations."""
    return [{"text": gap, "why": "because the questions that tell healthy from slow could not be answered",
             "source": f"{SOURCES['readme']} — The span convention"} for gap in gaps]
