"""Causes of an incident: the share of its latency increase over the baseline that each cause explains.

Pure: queries.stage_sums of both windows and the compared steps (analysis/incidents/compare.py) in, ranked causes
out. The decomposition (docs/incidents.md "Causes and scope"): an attempt's request time is the sum of its
buckets, so the mean per attempt is additive too, L = sum over buckets of (bucket sum / attempts) (t_retry summed
over runs, charged per attempt; an unknown value adds nothing). The increase Delta L splits into bucket deltas,
and t_first_token further into its stages. Each part is charged to one cause (parts() below); a part that shrank
counts 0. t_stream is charged to decode_throughput only for its slower decode (decode_growth): longer outputs are
a change of workload, which no cause explains. A cause's share is its parts' increase over max(Delta L, the sum of
the positive parts), so shares are 0..1 and add up to at most 1.
"""
MIN_SHARE = 0.1  # a cause must explain at least a tenth of the increase to be named
# Below this fraction of the baseline's mean time to first token (or of L when smaller), the grown parts are noise:
# no causes. TTFT, not L: a 650 ms network hop is an incident on a service whose answers stream for 17 s.
MIN_GROWTH = 0.05
# Decode a little slower under a heavier batch is load, not a decode problem: per-token speed must grow by this
# fraction before t_stream's growth is charged to decode_throughput (its incidents slow decode 2x or more).
DECODE_MIN_GROWTH = 0.15
# The queue's cause depends on the flowchart's compared answers: idle slots -> admission_gap, retries rising with
# queue depth -> retry_amplification, else queue_backlog.
QUEUE_CAUSES = (("admission_gap", ("idle_slots",)),
                ("retry_amplification", ("retry_rate_backlog", "retry_queue_spearman")))


def per_attempt(sums: dict) -> dict[str, float] | None:
    """The parts of mean latency per attempt (ms), or None without attempts.

    churn_first_token: the first-token time attempts on a new connection spent beyond the reused ones' mean (cold
    starts land there in the simulator), spread over all attempts; first_token_rest: t_first_token minus prep,
    network and that churn penalty (prefill and model time)."""
    n = sums["attempts"]
    if not n:
        return None
    mean = {name: sums[f"{name}_sum"] / n for name in
            ("t_queue", "t_conn", "t_first_token", "t_stream", "t_post", "t_retry", "prep", "network")}
    churn = 0.0
    if sums["new_first_token_n"] and sums["reused_first_token_n"]:
        penalty = (sums["new_first_token_sum"] / sums["new_first_token_n"]
                   - sums["reused_first_token_sum"] / sums["reused_first_token_n"])
        churn = max(penalty, 0.0) * sums["new_first_token_n"] / n
    mean["churn_first_token"] = churn
    mean["first_token_rest"] = mean["t_first_token"] - mean["prep"] - mean["network"] - churn
    return mean


def queue_cause(steps: dict[str, dict]) -> str:
    """The cause t_queue's growth is charged to, from the compared flowchart answers."""
    for code, nodes in QUEUE_CAUSES:
        if all(steps[name]["answer"] == "yes" for name in nodes):
            return code
    return "queue_backlog"


def parts(steps: dict[str, dict]) -> dict[str, str]:
    """part of per_attempt() -> the cause code its growth is charged to."""
    return {"t_queue": queue_cause(steps), "t_conn": "connection_churn", "churn_first_token": "connection_churn",
            "prep": "preprocessing", "network": "network_overhead", "first_token_rest": "prefill_pressure",
            "t_stream": "decode_throughput", "t_post": "post_processing", "t_retry": "retry_amplification"}


def decode_growth(incident: dict, baseline: dict, stream_delta: float) -> float:
    """The part of t_stream's growth per attempt (ms) that slower decode explains: (ms per output token in the
    incident - in the baseline) x the incident's output tokens per attempt. Longer outputs at the same speed are a
    change of workload, not of decode throughput. stream_delta (all of it) when a window has no token counts."""
    if not incident.get("decode_tokens_sum") or not baseline.get("decode_tokens_sum"):
        return stream_delta
    speed = [sums["decode_stream_sum"] / sums["decode_tokens_sum"] for sums in (incident, baseline)]
    if speed[0] < (1 + DECODE_MIN_GROWTH) * speed[1]:
        return 0.0
    return (speed[0] - speed[1]) * incident["decode_tokens_sum"] / incident["attempts"]


def latency(means: dict) -> float:
    """L: the mean request time per attempt (ms), the sum of the buckets' parts of per_attempt()."""
    return sum(means[k] for k in ("t_queue", "t_conn", "t_first_token", "t_stream", "t_post", "t_retry"))


def reference(means: dict) -> float:
    """What a growth is material against (ms): the mean time to first token (t_queue + t_conn + t_first_token) or
    L when that is smaller."""
    return min(latency(means), means["t_queue"] + means["t_conn"] + means["t_first_token"])


def causes(incident: dict, baseline: dict, steps: dict[str, dict]) -> list[dict]:
    """[{"code", "share"}] largest share first: the causes explaining at least MIN_SHARE of the increase.
    [] when a window is empty or the grown parts add up to less than MIN_GROWTH of the baseline's reference()."""
    a, b = per_attempt(incident), per_attempt(baseline)
    if a is None or b is None:
        return []
    deltas = {part: a[part] - b[part] for part in parts(steps)}
    deltas["t_stream"] = decode_growth(incident, baseline, deltas["t_stream"])
    grown: dict[str, float] = {}
    for part, code in parts(steps).items():
        grown[code] = grown.get(code, 0.0) + max(deltas[part], 0.0)
    denominator = max(latency(a) - latency(b), sum(grown.values()))
    if denominator <= 0 or sum(grown.values()) < MIN_GROWTH * reference(b):
        return []
    ranked = sorted(grown.items(), key=lambda item: -item[1])
    # TRICKY: shares are cut (not rounded) to 3 decimals, so that they never add up to more than 1
    return [{"code": code, "share": int(ms / denominator * 1000) / 1000}
            for code, ms in ranked if ms / denominator >= MIN_SHARE]
