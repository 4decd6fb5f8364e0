"""The verdicts of the rest of the request (decode, post-processing, the gateway's own time) and the two that name
no cause: healthy, and insufficient_data (what "healthy" becomes when the data cannot show that latency is fine)."""
from analysis.diagnosis.verdicts.record import B5, CONVENTION, FLOWCHART, PLAYBOOK, TRIAGE, Verdict, fix

HYGIENE = fix("Do not log full prompts synchronously on the hot path", ("004", "Inference hygiene checklist"))

VERDICTS = [
    # Decode speed is per token after the first: a TTFT tail under it stays unexplained (explains_tail).
    Verdict(
        "decode_throughput", nodes=("ttft_decode", "decode_speed"), thresholds=("decode_ms_per_token",),
        present=(("decode_speed",),), bucket="t_stream", parts=("t_stream",),
        pages=(("prompts", {}), ("runs", {"bucket": "t_stream"})), explains_tail=False,
        fixes=(
            fix("Quantize, enable FlashAttention / optimized kernels, add speculative decoding, and consider tensor "
                "parallelism", ("001", PLAYBOOK + " (if inter-token latency is high)")),
            fix("Cap max_tokens output: most products never need more than 256 to 512 tokens per turn",
                ("003", "Fix 2: Pick the smallest viable model for each job")),
            fix("Use constrained decoding or JSON grammars to avoid meandering completions",
                ("003", "Fix 3: Kill prompt bloat")),
            fix("Check output length and decode throughput before adding GPUs", ("000", FLOWCHART)),
            fix("Watch per-token streaming speed: token rate sag is an early signal of throttling",
                ("003", "Fix 9: Use provider features that actually help")),
        )),
    Verdict(
        "post_processing", nodes=("post_share",), thresholds=("post_share",), present=(("post_share",),),
        bucket="t_post", parts=("t_post",), pages=(("runs", {"bucket": "t_post"}),),
        fixes=(
            fix("Treat parsing, validation and persistence as a throughput limiter: move heavy work off the "
                "socket-read executor and measure CPU time explicitly", ("002", TRIAGE)),
            fix("Stream from the model to the client; do not buffer server side to stitch tool results unless you "
                "must", ("003", "Fix 4: Stream like you mean it")),
            fix("Parallelize tools with budgets and timeouts; return a partial answer and patch it later",
                ("003", "Fix 5: Parallelize retrieval and tools")),
            HYGIENE,
        )),
    # t_gateway: a gateway's server span outside its calls, seen when the engine it calls is traced too
    Verdict(
        "gateway_overhead", nodes=("gateway_share",), thresholds=("gateway_share",), present=(("gateway_share",),),
        parts=("t_gateway",), pages=(("service-map", {}),),
        fixes=(
            fix("Simplify gateway logic for latency-sensitive routes: auth and quota checks, routing and logging on "
                "the hot path add latency that has nothing to do with the model", ("000", B5)),
            fix("Check the streaming proxy configuration: a gateway that buffers the response adds its whole length to "
                "the first token", ("000", B5)),
            HYGIENE,
        )),
    Verdict("healthy", nodes=("memory_headroom", "failing_attempts"),
            thresholds=("gpu_memory_used_share", "failed_attempt_share"), fixes=(), is_cause=False,
            explains_tail=False),
    # Not seed fixes: what the spans must carry before the flowchart can tell healthy from slow (docs/diagnosis.md).
    # No node ends here: the walk's "healthy" becomes insufficient_data (analysis.diagnosis.flowchart.diagnose).
    Verdict(
        "insufficient_data", nodes=(), thresholds=(), is_cause=False, explains_tail=False,
        fixes=(
            fix("Send the lifecycle events on each attempt span (queued, admitted, first_token, last_token, released) "
                "and the token counts, as docs/span-convention.md describes; the coverage strip on every page shows "
                "what is missing", ("readme", CONVENTION)),
            fix("A client instrumentation gives TTFT only for a call it saw stream (a first-chunk time: "
                "gen_ai.response.time_to_first_chunk, OpenLIT's gen_ai.server.time_to_first_token with "
                "gen_ai.request.stream, OpenLLMetry's chunk events): if your calls stream, check that the "
                "instrumentation records it (LiteLLM: LITELLM_OTEL_V2=true; the official openai-v2 and LangChain's "
                "instrumentations record no first chunk: OpenLLMetry's or OpenInference's openai instrumentation "
                "does); if they do not, TTFT is the whole call and only a first_token event from the server can "
                "split it", ("readme", CONVENTION)),
        )),
]
