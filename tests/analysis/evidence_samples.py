"""Hand-made evidence (analysis.evidence_types.Evidence, built from its JSON) from the simulator calibration numbers.

HEALTHY: the healthy preset (t_queue p95 0, TTFT p95 ~256 ms, retry rate 0.006, reuse 0.97, prep share 0.20,
network share 0.13, ~16 ms per output token, t_post median 18 ms with share 0.005). Each preset function
changes only what that preset's signature changes, and takes further changes the same way:
queue_backlog(retries__rate=0.3). Keys the JSON leaves out are unknown (Evidence.from_json).
"""
import copy

from analysis.evidence_types import Evidence


def bucket(p50, p95, p99=None, mean=None, count=2400):
    return {"p50": p50, "p95": p95, "p99": p99 if p99 is not None else p95 * 1.3,
            "mean": mean if mean is not None else p50, "count": count}


def gap(service, backlog_seconds, **instances):
    """gap_fraction of instances given as name=fraction (cap 8, the backlog split evenly)."""
    each = backlog_seconds / len(instances)
    return {"service": service, "backlog_seconds": backlog_seconds,
            "instances": {name: {"gap_fraction": f, "backlog_seconds": each, "cap": 8}
                          for name, f in instances.items()}}


def tail(tenant, count, ttft_p95, ttft_p99, total_p95, total_p99):
    return {"tenant": tenant, "count": count, "ttft_p95": ttft_p95, "ttft_p99": ttft_p99, "total_p95": total_p95,
            "total_p99": total_p99}


HEALTHY = {
    "window": {"start": "2026-01-05T10:00:00+00:00", "end": "2026-01-05T10:20:00+00:00", "seconds": 1200.0},
    "requests": 2400,
    "buckets": {
        "t_queue": bucket(0.0, 0.0), "t_conn": bucket(0.0, 0.0), "t_first_token": bucket(180.0, 250.0),
        "t_stream": bucket(3000.0, 6500.0), "t_post": bucket(18.0, 30.0), "t_retry": bucket(0.0, 0.0),
        "ttft": bucket(185.0, 256.0), "total": bucket(3300.0, 6900.0),
    },
    "dominance": {
        "t_queue": {"p50_share": 0.0, "p95_share": 0.0}, "t_conn": {"p50_share": 0.0, "p95_share": 0.0},
        "t_first_token": {"p50_share": 0.06, "p95_share": 0.04}, "t_stream": {"p50_share": 0.93, "p95_share": 0.95},
        "t_post": {"p50_share": 0.005, "p95_share": 0.004}, "t_retry": {"p50_share": 0.0, "p95_share": 0.0},
    },
    "stages": {"prep_share_of_first_token": 0.20, "network_share_of_first_token": 0.13},
    "decode": {"ms_per_output_token_p50": 16.0, "ms_per_output_token_p95": 19.0, "count": 2390},
    "segments": {
        "<1k": {"ttft_p50": 160.0, "ttft_p95": 220.0, "count": 1500},
        "1-4k": {"ttft_p50": 210.0, "ttft_p95": 270.0, "count": 700},
        "4-16k": {"ttft_p50": 330.0, "ttft_p95": 420.0, "count": 200},
        ">16k": {"ttft_p50": None, "ttft_p95": None, "count": 0},
    },
    "gap_fraction": gap(None, 0.0, **{"gpu-0": None, "gpu-1": None}),
    "churn": {"windows": 20, "spearman_ttft_p95": 0.12, "slope": 0.01, "new_connections_per_success": 0.03},
    "tenants": [tail("alice", 1200, 250.0, 320.0, 6800.0, 8000.0), tail("bob", 1200, 262.0, 330.0, 7000.0, 8200.0)],
    "noisy_neighbours": [],
    "retries": {"t_retry": bucket(0.0, 0.0), "runs": 2400, "attempts": 2414, "rate": 0.006, "runs_with_retries_share": 0.006,
                "causes": {"timeout": 14}, "spearman_retries_queue_depth": None, "wasted_tokens": 3100},
    "success_rate": 0.998,
    "successful_runs_per_hour": 7185.6,
}


def evidence(*changes: dict) -> Evidence:
    """HEALTHY with each dict of changes applied in turn, as Evidence. A change names a nested value with
    "__" between keys (list items by index): {"buckets__t_queue__p95": 43600.0, "tenants__0__count": 10}."""
    data = copy.deepcopy(HEALTHY)
    for change in changes:
        for dotted, value in change.items():
            *parents, leaf = dotted.split("__")
            target = data
            for part in parents:
                target = target[int(part)] if isinstance(target, list) else target.setdefault(part, {})
            target[int(leaf) if isinstance(target, list) else leaf] = value
    return Evidence.from_json(data)


def healthy(**changes) -> Evidence:
    return evidence(changes)


def queue_backlog(**changes) -> Evidence:
    # queue p95 43.6 s vs stream p95 11.7 s; queue 0.77 of request time; in_flight at cap the whole backlog
    return evidence(dict(buckets__t_queue=bucket(20000.0, 43600.0), buckets__t_stream=bucket(5000.0, 11700.0),
                         dominance__t_queue={"p50_share": 0.7, "p95_share": 0.77},
                         buckets__ttft=bucket(21000.0, 44000.0), gap_fraction=gap(0.0, 1100.0, **{"gpu-0": 0.0}),
                         retries__spearman_retries_queue_depth=0.2), changes)


def admission_gap(**changes) -> Evidence:
    # gap_fraction ~1.0, backlog ~30% of the window, queue p95 2.6 s
    return evidence(dict(buckets__t_queue=bucket(0.0, 2600.0),
                         dominance__t_queue={"p50_share": 0.0, "p95_share": 0.3},
                         gap_fraction=gap(0.98, 360.0, **{"gpu-0": 0.97, "gpu-1": 0.99})), changes)


def retry_amplification(**changes) -> Evidence:
    # retry rate 0.30 (healthy 0.006), 98% timeouts, Spearman(retries, queue depth) 0.89, queue p95 several seconds
    return evidence(dict(buckets__t_queue=bucket(400.0, 4800.0),
                         dominance__t_queue={"p50_share": 0.1, "p95_share": 0.4},
                         gap_fraction=gap(0.05, 500.0, **{"gpu-0": 0.05}),
                         retries={"t_retry": bucket(2000.0, 9000.0), "runs": 2400, "attempts": 3120, "rate": 0.30,
                                  "runs_with_retries_share": 0.22,
                                  "causes": {"timeout": 490, "server_error": 10}, "spearman_retries_queue_depth": 0.89,
                                  "wasted_tokens": 410000},
                         success_rate=0.97), changes)


def preprocessing(**changes) -> Evidence:
    # prep share of t_first_token 0.67, TTFT median 605 ms, no backlog
    return evidence(dict(stages__prep_share_of_first_token=0.67, stages__network_share_of_first_token=0.05,
                         buckets__ttft=bucket(605.0, 900.0)), changes)


def prefill_pressure(**changes) -> Evidence:
    # TTFT of long prompts 6.6 s vs 330 ms for short (20x), decode normal 17.9 ms/token
    return evidence(dict(buckets__ttft=bucket(400.0, 6400.0), decode__ms_per_output_token_p50=17.9, segments={
        "<1k": {"ttft_p50": 330.0, "ttft_p95": 600.0, "count": 1400},
        "1-4k": {"ttft_p50": 900.0, "ttft_p95": 1800.0, "count": 600},
        "4-16k": {"ttft_p50": 6600.0, "ttft_p95": 9000.0, "count": 300},
        ">16k": {"ttft_p50": None, "ttft_p95": None, "count": 0}}), changes)


def decode_throughput(**changes) -> Evidence:
    # 57 ms per output token (3.5x), TTFT p95 234 ms
    return evidence(dict(decode__ms_per_output_token_p50=57.0, decode__ms_per_output_token_p95=70.0,
                         buckets__ttft=bucket(170.0, 234.0)), changes)


def connection_churn(**changes) -> Evidence:
    # Spearman(new connections per success, TTFT p95 per minute) 0.92 over 30 windows; reuse 0.45; TTFT p95 1.09 s
    return evidence(dict(churn={"windows": 30, "spearman_ttft_p95": 0.92, "slope": 900.0,
                                "new_connections_per_success": 0.55},
                         buckets__ttft=bucket(400.0, 1090.0), buckets__t_conn=bucket(0.0, 600.0)), changes)


def post_processing(**changes) -> Evidence:
    # t_post median 2.6 s, share 0.38
    return evidence(dict(buckets__t_post=bucket(2600.0, 3400.0),
                         dominance__t_post={"p50_share": 0.38, "p95_share": 0.3}), changes)


def network_overhead(**changes) -> Evidence:
    # network share of first token 0.89, TTFT ~750 ms
    return evidence(dict(stages__network_share_of_first_token=0.89, stages__prep_share_of_first_token=0.03,
                         buckets__ttft=bucket(700.0, 800.0)), changes)


def noisy_tenant(**changes) -> Evidence:
    # one tenant holds 63% of busy slots during backlog with 25% of arrivals; others' queue p95 3.5 s in its burst
    return evidence(dict(
        buckets__t_queue=bucket(0.0, 2900.0), dominance__t_queue={"p50_share": 0.0, "p95_share": 0.35},
        gap_fraction=gap(0.02, 240.0, **{"gpu-0": 0.02}),
        tenants=[tail("noisy", 600, 300.0, 400.0, 7000.0, 9000.0), tail("alice", 900, 3800.0, 4500.0, 10500.0, 12000.0),
                 tail("bob", 900, 3700.0, 4400.0, 10400.0, 11800.0)],
        noisy_neighbours=[{"tenant": "noisy", "in_flight_share_during_backlog": 0.63, "others_t_queue_p95": 3500.0}],
    ), changes)


def no_requests() -> Evidence:
    """collect()'s answer for a service without requests in the window."""
    return Evidence.from_json({})
