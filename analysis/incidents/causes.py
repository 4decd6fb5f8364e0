"""Causes of an incident: the share of its latency increase over the baseline that each cause explains.

Pure: queries.stage_sums of both windows and the compared steps (analysis/incidents/compare.py) in, ranked causes
out. The decomposition (docs/incidents.md "Causes and scope"): an attempt's request time is the sum of its buckets, so
the mean per attempt is additive too, L = sum over buckets of (bucket sum / attempts) (t_retry summed over runs, charged
per attempt; an unknown value adds nothing). The increase Delta L splits into bucket deltas, and t_first_token further
into its stages. Each part is charged to one cause (parts() below: the verdict whose record in
analysis.diagnosis.verdicts names the part); a part that shrank counts 0. t_stream is charged to decode_throughput only
for its slower decode (decode_growth): longer outputs are a change of workload, which no cause explains. A cause's share
is its parts' increase over max(Delta L, the sum of the positive parts), so shares are 0..1 and add up to at most 1.

A gateway whose calls were seen at two layers (layered()): each linked call's own buckets are replaced by the layers
that make it up, so its first token's growth is not all charged to prefill_pressure. t_gateway (its server span
outside its calls) goes to gateway_overhead, t_network_total (the call's total minus the engine's) to
network_overhead, and the engine attempts' own parts to the engine's causes as above, each cause naming its layer
and service ({"code", "share", "layer": "gateway" | "network" | "engine", "service"}).
"""
from analysis.diagnosis import verdicts

MIN_SHARE = 0.1  # a cause must explain at least a tenth of the increase to be named
# Below this fraction of the baseline's mean time to first token (or of L when smaller), the grown parts are noise:
# no causes. TTFT, not L: a 650 ms network hop is an incident on a service whose answers stream for 17 s.
MIN_GROWTH = 0.05
# Decode a little slower under a heavier batch is load, not a decode problem: per-token speed must grow by this
# fraction before t_stream's growth is charged to decode_throughput (its incidents slow decode 2x or more).
DECODE_MIN_GROWTH = 0.15
# The parts of per_attempt() charged to a cause, in the order their growth is summed (ties rank in this order).
PARTS = ("t_queue", "t_conn", "churn_first_token", "prep", "network", "first_token_rest", "t_stream", "t_post",
         "t_retry")


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
    """The cause t_queue's growth is charged to, from the compared flowchart answers: the first verdict whose
    queue_nodes all answer yes (idle slots: admission_gap; retries rising with queue depth: retry_amplification),
    else t_queue's owner (queue_backlog)."""
    for code, verdict in verdicts.REGISTRY.items():
        if verdict.queue_nodes and all(steps.get(name, {}).get("answer") == "yes" for name in verdict.queue_nodes):
            return code
    return verdicts.parts()["t_queue"]


def parts(steps: dict[str, dict]) -> dict[str, str]:
    """part of per_attempt() -> the cause code its growth is charged to (PARTS, in order)."""
    owners = verdicts.parts()
    return {part: queue_cause(steps) if part == "t_queue" else owners[part] for part in PARTS}


def engine_parts(steps: dict[str, dict] | None) -> dict[str, str]:
    """parts() for an engine's attempts under a gateway's calls: its queue's cause from its own compared steps
    (None: not read, since its queue did not grow), the rest as parts()."""
    return parts(steps or {})


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


# the calls' own parts the layers replace (layer_stage_sums' call_<part>_sum): the call's time is the layer gap plus the
# engine's; t_retry (the gateway's tries) stays the gateway's
CALL_PARTS = ("t_queue", "t_conn", "t_first_token", "t_stream", "t_post", "prep", "network")
FIRST_TOKEN = ("t_queue", "t_conn", "t_first_token")


def _remainder(sums: dict, links: list[dict]) -> dict:
    """The gateway's stage_sums without its linked calls' own parts; its decode sums dropped, so the remainder's
    stream growth (its calls seen at one layer) counts whole."""
    out = dict(sums, decode_stream_sum=0.0, decode_tokens_sum=0.0)
    for part in CALL_PARTS:
        out[f"{part}_sum"] = sums[f"{part}_sum"] - sum(row[f"call_{part}_sum"] for row in links)
    return out


def _layer_means(sums: dict, links: list[dict]) -> tuple[dict, dict] | None:
    """(the parts per gateway attempt keyed ("own" | "gateway" | "network" | "engine", service, part), the means of
    each engine's attempts per gateway attempt by service), or None without attempts."""
    n = sums["attempts"]
    own = per_attempt(_remainder(sums, links))
    if own is None:
        return None
    means = {("own", "", part): ms for part, ms in own.items()}
    means[("gateway", "", "t_gateway")] = sum(row["t_gateway_sum"] for row in links) / n
    engines = {}
    for row in links:
        means[("network", row["engine_service"], "t_network_total")] = row["t_network_total_sum"] / n
        engines[row["engine_service"]] = per_attempt({**row, "attempts": n})
    return means, engines


def _latency(means: dict, engines: dict) -> tuple[float, float]:
    """(L, the mean time to first token) per gateway attempt across the layers, ms."""
    own = {part: ms for (where, _, part), ms in means.items() if where == "own"}
    between = sum(ms for (where, _, _), ms in means.items() if where in ("gateway", "network"))
    first = sum(own[p] for p in FIRST_TOKEN) + between + sum(sum(e[p] for p in FIRST_TOKEN) for e in engines.values())
    return latency(own) + between + sum(latency(e) for e in engines.values()), first


def layered(incident: dict, baseline: dict, steps: dict[str, dict], links: tuple[list[dict], list[dict]],
            gateway: str, engine_steps) -> list[dict]:
    """causes() of a gateway with calls seen at two layers: [{"code", "share", "layer", "service"}] largest first.
    links: queries.layer_stage_sums of the incident and of the baseline; engine_steps(engine) -> that engine's
    compared steps (read only when its queue grew). [] as causes() when a window is empty or nothing grew enough."""
    a, b = _layer_means(incident, links[0]), _layer_means(baseline, links[1])
    if a is None or b is None:
        return []
    (mine, engines_a), (theirs, engines_b) = a, b
    grown: dict[tuple, float] = {}

    def charge(key: tuple, ms: float) -> None:
        grown[key] = grown.get(key, 0.0) + max(ms, 0.0)
    own_a = {part: ms for (where, _, part), ms in mine.items() if where == "own"}
    own_b = {part: ms for (where, _, part), ms in theirs.items() if where == "own"}
    for part, code in parts(steps).items():
        delta = own_a[part] - own_b[part]
        charge((code, "gateway", gateway), decode_growth({}, {}, delta) if part == "t_stream" else delta)
    owners = verdicts.parts()
    charge((owners["t_gateway"], "gateway", gateway), mine[("gateway", "", "t_gateway")]
           - theirs[("gateway", "", "t_gateway")])
    for engine, means in engines_a.items():
        before = engines_b.get(engine) or dict.fromkeys(means, 0.0)
        charge((owners["t_network_total"], "network", engine), mine[("network", engine, "t_network_total")]
               - theirs.get(("network", engine, "t_network_total"), 0.0))
        deltas = {part: means[part] - before[part] for part in means}
        codes = engine_parts(engine_steps(engine) if deltas["t_queue"] > 0 else None)
        sums_a = next({**r, "attempts": incident["attempts"]} for r in links[0] if r["engine_service"] == engine)
        sums_b = next(({**r, "attempts": baseline["attempts"]} for r in links[1] if r["engine_service"] == engine), {})
        for part, code in codes.items():
            delta = decode_growth(sums_a, sums_b, deltas[part]) if part == "t_stream" else deltas[part]
            charge((code, "engine", engine), delta)
    (l_a, _), (l_b, first_b) = _latency(mine, engines_a), _latency(theirs, engines_b)
    denominator = max(l_a - l_b, sum(grown.values()))
    if denominator <= 0 or sum(grown.values()) < MIN_GROWTH * min(l_b, first_b):
        return []
    ranked = sorted(grown.items(), key=lambda item: -item[1])
    return [{"code": code, "share": int(ms / denominator * 1000) / 1000, "layer": layer, "service": service}
            for (code, layer, service), ms in ranked if ms / denominator >= MIN_SHARE]
