"""Presets of the simulated serving path: one clearly dominant cause each, realistic noise in the rest.

Every knob is a field of Scenario with a healthy default; a preset overrides only what makes its
cause dominant. Times are milliseconds unless the name says otherwise.
"""
import math
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Tenant:
    name: str
    share: float = 1.0  # share of arrivals
    prompt_tokens: int = 900  # median of a lognormal
    output_tokens: int = 220
    long_prompt_share: float = 0.05  # share of prompts drawn around 12k tokens
    bursts: tuple = ()  # (start fraction of the run, length fraction, arrival multiplier)


@dataclass(frozen=True)
class Scenario:
    name: str
    cause: str
    description: str
    rps: float = 5.0
    tenants: tuple = (Tenant("acme", 0.4), Tenant("globex", 0.3), Tenant("initech", 0.2), Tenant("umbrella", 0.1))
    routes: tuple = (("/v1/chat/completions", 0.7), ("/v1/completions", 0.2), ("/v1/summarize", 0.1))
    models: tuple = (("llama-3.1-8b-instruct", 0.7), ("llama-3.1-70b-instruct", 0.3))
    services: tuple = ("llm-gateway",)
    instances: int = 3
    cap: int = 16
    # scheduler: stalls during which nothing is admitted although slots are free
    stall_every_s: float = 0.0  # mean seconds between stalls (0: never)
    stall_ms: float = 0.0
    # client -> upstream connection pool
    reuse_probability: float = 0.97
    churn_wave_minutes: float = 0.0  # >0: reuse probability swings over waves of this length
    connect_ms: float = 40.0
    cold_start_ms: float = 60.0  # extra first-token delay on a fresh connection
    # preprocessing on a small CPU pool per instance
    cpu_workers: int = 4
    tokenize_ms_per_1k: float = 4.0
    prompt_build_ms: float = 8.0
    policy_ms: float = 6.0
    network_ms: float = 12.0  # two layers: the network between the gateway and the engine, half each way
    gateway_ms: float = 6.0  # two layers only: time in the gateway outside its calls (auth, quota, routing), median
    # engine
    prefill_ms_per_1k: float = 45.0
    kv_pressure: float = 0.3  # prefill slow-down per long context in flight, relative to cap
    decode_ms_per_token: float = 14.0
    batch_slowdown: float = 0.35  # decode slow-down at full batch
    post_ms: float = 15.0
    post_ms_per_1k_output: float = 10.0
    # client behaviour
    timeout_s: float = 60.0  # the client gives up when no first token came by then
    max_attempts: int = 3
    backoff_ms: float = 250.0
    server_error_rate: float = 0.004
    connection_error_rate: float = 0.002
    rate_limit_queue: int = 400  # queue length per instance past which the gateway answers 429
    retrieval_share: float = 0.3
    retrieval_ms: float = 60.0
    tool_share: float = 0.1
    tool_ms: float = 120.0
    long_prompt_share: float | None = None  # set: overrides every tenant's (an incident overlay's long contexts)
    # engine (issue 13): KV cache capacity in tokens (0: no limit); past it an attempt is preempted and re-prefills
    kv_capacity_tokens: int = 0
    preempt_ms: float = 900.0
    extra_prefill_ms: float = 0.0  # a fixed delay before the first token: batch formation wait, allocator thrash
    late_instance_s: float = 0.0  # > 0: the last instance starts serving this many seconds in (a scale-out)
    warmup_ms: float = 0.0  # extra first-token time on an instance just started, fading over warmup_s
    warmup_s: float = 240.0
    # the engine's metrics only (simulator/engine_metrics.py): no effect on the spans
    gpu_busy: float = 0.6  # GPU utilisation at a full batch
    fb_used_share: float = 0.88  # frame buffer used at rest (vLLM pre-allocates its KV pool)
    restart_every_s: float = 0.0  # > 0: the engine restarts (OOM) this often, each instance in turn
    prefix_hit_rate: float = 0.6
    # where each instance runs and on what: resource attributes and metric labels only, no effect on any timing.
    # Instance i (0-based) is in regions[i % len(regions)] (cloud.region); gpu_count > 0 sends the resource attribute
    # gpu.count; gpus > 0 sends the DCGM metrics once per GPU with a `gpu` label, as dcgm-exporter does
    regions: tuple = ()
    gpu_count: int = 0
    gpus: int = 0

    def with_(self, **changes) -> "Scenario":
        return replace(self, **changes)

    def resource(self, index: int) -> dict:
        """Resource attributes of instance `index` (0-based) besides service.name and service.instance.id."""
        attrs = {"cloud.region": self.regions[index % len(self.regions)]} if self.regions else {}
        if self.gpu_count > 0:
            attrs["gpu.count"] = self.gpu_count
        return attrs

    def at_rps(self, rps: float) -> "Scenario":
        """The same preset at another rate, with instances scaled so the load per instance stays."""
        instances = max(1, math.ceil(self.instances * rps / self.rps))
        return replace(self, rps=rps, instances=instances)


BASE = Scenario("healthy", "healthy", "Moderate load, warm connections, fast stages: nothing dominates.")

PRESETS: dict[str, Scenario] = {
    "healthy": BASE,
    "queue_backlog": BASE.with_(
        name="queue_backlog", cause="queue_backlog", rps=3.4, cap=8, timeout_s=180.0,
        tenants=tuple(replace(t, bursts=((0.15, 0.2, 1.6), (0.55, 0.2, 1.6))) for t in BASE.tenants),
        description="Arrivals above what the capped instances serve: requests wait with every slot busy."),
    "admission_gap": BASE.with_(
        name="admission_gap", cause="admission_gap", rps=5.0, stall_every_s=4.0, stall_ms=2500.0,
        description="The scheduler stalls: a backlog builds while in-flight sits below the cap."),
    "preprocessing": BASE.with_(
        name="preprocessing", cause="preprocessing", instances=6, cpu_workers=1, tokenize_ms_per_1k=70.0,
        prompt_build_ms=110.0, policy_ms=60.0, tenants=tuple(replace(t, prompt_tokens=2600) for t in BASE.tenants),
        description="Tokenizing and prompt building on one CPU worker per instance before the model starts."),
    "prefill_pressure": BASE.with_(
        name="prefill_pressure", cause="prefill_pressure", rps=3.5, prefill_ms_per_1k=140.0, kv_pressure=6.0,
        tenants=tuple(replace(t, long_prompt_share=0.35) for t in BASE.tenants),
        description="Long contexts fill the KV cache: prefill, hence time to first token, grows with prompt length."),
    "decode_throughput": BASE.with_(
        name="decode_throughput", cause="decode_throughput", rps=0.9, decode_ms_per_token=40.0, batch_slowdown=1.0,
        timeout_s=150.0,
        tenants=tuple(replace(t, output_tokens=300) for t in BASE.tenants),
        description="Slow per-token decode under batch load: first token is fine, streaming is slow."),
    "connection_churn": BASE.with_(
        name="connection_churn", cause="connection_churn", reuse_probability=0.45, churn_wave_minutes=6.0,
        connect_ms=180.0, cold_start_ms=450.0,
        description="Connections are not reused: handshakes and cold starts make first-token time jumpy."),
    "retry_amplification": BASE.with_(
        name="retry_amplification", cause="retry_amplification", rps=6.0, cap=10, timeout_s=8.0, max_attempts=4,
        backoff_ms=100.0,
        tenants=tuple(replace(t, output_tokens=120, bursts=((0.2, 0.12, 2.2), (0.6, 0.12, 2.2))) for t in BASE.tenants),
        description="Short client timeouts under load: retries add load, which adds timeouts."),
    "post_processing": BASE.with_(
        name="post_processing", cause="post_processing", post_ms=2200.0, post_ms_per_1k_output=1500.0,
        description="Parsing, validation and persistence after the last token dominate."),
    "network_overhead": BASE.with_(
        name="network_overhead", cause="network_overhead", network_ms=650.0,
        description="A cross-region hop between gateway and engine: the model is fast, the path is not."),
    "noisy_tenant": BASE.with_(
        name="noisy_tenant", cause="noisy_tenant", rps=3.0, cap=12,
        tenants=(Tenant("acme", 0.3), Tenant("globex", 0.25), Tenant("initech", 0.2),
                 Tenant("bulkcorp", 0.25, prompt_tokens=6000, output_tokens=600, long_prompt_share=0.3,
                        bursts=((0.25, 0.45, 2.2),))),
        description="One tenant's bulk traffic takes most slots; everyone else queues behind it."),
    # Slow in absolute terms all the time, and steady: a 70B model on long prompts. TTFT and decode are both
    # slow, which the flowchart names decode_throughput; there is headroom, so no queue forms.
    "steady_slow": BASE.with_(
        name="steady_slow", cause="decode_throughput", rps=2.0, instances=5, timeout_s=120.0,
        models=(("llama-3.1-70b-instruct", 1.0),), prefill_ms_per_1k=110.0, decode_ms_per_token=45.0,
        batch_slowdown=0.3, tenants=tuple(replace(t, prompt_tokens=4000, output_tokens=350) for t in BASE.tenants),
        description="A 70B model on long prompts: slow first tokens and slow decode, every minute, without change."),
    # Engine presets (issue 13): the spans show a high TTFT that nothing in the request path explains; the
    # engine's metrics (simulator/engine_metrics.py) say why.
    "kv_cache_pressure": BASE.with_(
        name="kv_cache_pressure", cause="kv_cache_pressure", rps=2.5, kv_capacity_tokens=12000, preempt_ms=800.0,
        tenants=tuple(replace(t, prompt_tokens=2500, output_tokens=400, long_prompt_share=0.1) for t in BASE.tenants),
        description="The KV cache is too small for the contexts in flight: requests are preempted and re-prefilled."),
    "gpu_memory_pressure": BASE.with_(
        name="gpu_memory_pressure", cause="gpu_memory_pressure", rps=3.0, extra_prefill_ms=700.0, fb_used_share=0.985,
        restart_every_s=600.0,
        description="No GPU memory headroom: allocations stall, and the engine is OOM-killed and restarts."),
    # Instability at healthy latency: engines OOM-killed in turn with no memory headroom, while the percentiles
    # stay fine. The flowchart's stability branch says gpu_memory_pressure, never healthy.
    "oom_kills": BASE.with_(
        name="oom_kills", cause="gpu_memory_pressure", fb_used_share=0.985, restart_every_s=300.0,
        description="Latency fine, but the engines are OOM-killed in turn (< 2 % GPU memory headroom)."),
    "cold_start": BASE.with_(
        name="cold_start", cause="cold_start", instances=4, late_instance_s=600.0, warmup_ms=6000.0, warmup_s=240.0,
        description="A replica scales out mid-run and serves its first minutes cold (weights loading, caches empty)."),
    "batching_delay": BASE.with_(
        name="batching_delay", cause="batching_delay", rps=3.0, extra_prefill_ms=750.0, gpu_busy=3.5,
        description="The GPU is busy and the queue empty, yet every first token waits for a batch to form."),
}


# Causes only two layers have (simulate --layers; docs/simulator.md "Two layers"): time inside the gateway, outside
# its calls. 1.5 s (a guardrail model checking the prompt before the call and the answer after it) against a ~3.5 s
# call gives a t_gateway share of ~0.3 at p50.
LAYERED_PRESETS: dict[str, Scenario] = {
    "gateway_overhead": BASE.with_(
        name="gateway_overhead", cause="gateway_overhead", gateway_ms=1500.0,
        description="Time inside the gateway (guardrails before and after the call): the engine and the hop are "
                    "fast."),
}

# The demo: one continuous hour per service, (base, incidents) with every incident well after ~20 minutes of
# normal traffic; incidents are simulator.incidents specs. batch-gateway runs at 2 rps: at the healthy 5 rps a
# slow decode fills every slot and reads as a backlog. llm-70b is slow all hour and has no incident.
DEMO_SERVICES = {
    "chat-gateway": (PRESETS["healthy"], ("queue_backlog@25m+15m",)),
    "rag-gateway": (PRESETS["healthy"], ("connection_churn@30m+15m",)),
    "batch-gateway": (PRESETS["healthy"].with_(rps=2.0), ("decode_throughput@20m+20m",)),
    "llm-70b": (PRESETS["steady_slow"], ()),
}
# The demo's two-layer pair (simulate --layers): edge-gateway in front of edge-engine, in one trace, healthy for 35
# minutes, then a slow hop between them; keyed by the pair's name, as simulate's --service with --layers.
DEMO_LAYERED = {
    "edge": (PRESETS["healthy"].with_(rps=2.0), ("network_overhead@35m+15m",)),
}
__all__ = ["Scenario", "Tenant", "PRESETS", "LAYERED_PRESETS", "DEMO_SERVICES", "DEMO_LAYERED", "field"]
