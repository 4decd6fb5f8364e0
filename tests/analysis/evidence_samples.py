"""Hand-made evidence dicts (the shape of analysis.evidence.collect) from the simulator calibration numbers.

healthy(): the healthy preset (t_queue p95 0, TTFT p95 ~256 ms, retry rate 0.006, reuse 0.97, prep share 0.20,
network share 0.13, ~16 ms per output token, t_post median 18 ms with share 0.005). Each preset function
changes only what that preset's signature changes.
"""
import copy


def bucket(p50, p95, p99=None, mean=None, count=2400):
    return {"p50": p50, "p95": p95, "p99": p99 if p99 is not None else p95 * 1.3,
            "mean": mean if mean is not None else p50, "count": count}


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
    "decode": {"ms_per_output_token_p50": 16.0, "ms_per_output_token_p95": 19.0},
    "segments": {
        "<1k": {"ttft_p50": 160.0, "ttft_p95": 220.0, "count": 1500},
        "1-4k": {"ttft_p50": 210.0, "ttft_p95": 270.0, "count": 700},
        "4-16k": {"ttft_p50": 330.0, "ttft_p95": 420.0, "count": 200},
        ">16k": {"ttft_p50": None, "ttft_p95": None, "count": 0},
    },
    "gap_fraction": {"service": None, "instances": {"gpu-0": None, "gpu-1": None}, "backlog_seconds": 0.0},
    "churn": {"windows": 20, "spearman_ttft_p95": 0.12, "slope": 0.01, "new_connections_per_success": 0.03},
    "tenants": [
        {"tenant": "alice", "count": 1200, "ttft_p95": 250.0, "ttft_p99": 320.0, "total_p95": 6800.0, "total_p99": 8000.0},
        {"tenant": "bob", "count": 1200, "ttft_p95": 262.0, "ttft_p99": 330.0, "total_p95": 7000.0, "total_p99": 8200.0},
    ],
    "noisy_neighbours": [],
    "retries": {"rate": 0.006, "runs_with_retries_share": 0.006, "causes": {"timeout": 14}, "t_retry_p95": 0.0,
                "spearman_retries_queue_depth": None, "tokens_wasted": 3100},
    "success_rate": 0.998,
    "successful_runs_per_hour": 7185.6,
}


def healthy() -> dict:
    return copy.deepcopy(HEALTHY)


def with_(evidence: dict, **paths) -> dict:
    """Set nested values: with_(e, buckets__t_queue__p95=43600.0)."""
    for dotted, value in paths.items():
        *parents, leaf = dotted.split("__")
        target = evidence
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    return evidence


def queue_backlog() -> dict:
    # queue p95 43.6 s vs stream p95 11.7 s; queue 0.77 of request time; in_flight at cap the whole backlog
    return with_(healthy(), buckets__t_queue=bucket(20000.0, 43600.0), buckets__t_stream=bucket(5000.0, 11700.0),
                 dominance__t_queue={"p50_share": 0.7, "p95_share": 0.77}, buckets__ttft=bucket(21000.0, 44000.0),
                 gap_fraction={"service": 0.0, "instances": {"gpu-0": 0.0}, "backlog_seconds": 1100.0},
                 retries__spearman_retries_queue_depth=0.2)


def admission_gap() -> dict:
    # gap_fraction ~1.0, backlog ~30% of the window, queue p95 2.6 s
    return with_(healthy(), buckets__t_queue=bucket(0.0, 2600.0), dominance__t_queue={"p50_share": 0.0, "p95_share": 0.3},
                 gap_fraction={"service": 0.98, "instances": {"gpu-0": 0.97, "gpu-1": 0.99}, "backlog_seconds": 360.0})


def retry_amplification() -> dict:
    # retry rate 0.30 (healthy 0.006), 98% timeouts, Spearman(retries, queue depth) 0.89, queue p95 several seconds
    return with_(healthy(), buckets__t_queue=bucket(400.0, 4800.0), dominance__t_queue={"p50_share": 0.1, "p95_share": 0.4},
                 gap_fraction={"service": 0.05, "instances": {"gpu-0": 0.05}, "backlog_seconds": 500.0},
                 retries={"rate": 0.30, "runs_with_retries_share": 0.22, "causes": {"timeout": 490, "server_error": 10},
                          "t_retry_p95": 9000.0, "spearman_retries_queue_depth": 0.89, "tokens_wasted": 410000},
                 success_rate=0.97)


def preprocessing() -> dict:
    # prep share of t_first_token 0.67, TTFT median 605 ms, no backlog
    return with_(healthy(), stages__prep_share_of_first_token=0.67, stages__network_share_of_first_token=0.05,
                 buckets__ttft=bucket(605.0, 900.0))


def prefill_pressure() -> dict:
    # TTFT of long prompts 6.6 s vs 330 ms for short (20x), decode normal 17.9 ms/token
    return with_(healthy(), buckets__ttft=bucket(400.0, 6400.0), decode__ms_per_output_token_p50=17.9,
                 segments={
                     "<1k": {"ttft_p50": 330.0, "ttft_p95": 600.0, "count": 1400},
                     "1-4k": {"ttft_p50": 900.0, "ttft_p95": 1800.0, "count": 600},
                     "4-16k": {"ttft_p50": 6600.0, "ttft_p95": 9000.0, "count": 300},
                     ">16k": {"ttft_p50": None, "ttft_p95": None, "count": 0}})


def decode_throughput() -> dict:
    # 57 ms per output token (3.5x), TTFT p95 234 ms
    return with_(healthy(), decode={"ms_per_output_token_p50": 57.0, "ms_per_output_token_p95": 70.0},
                 buckets__ttft=bucket(170.0, 234.0))


def connection_churn() -> dict:
    # Spearman(new connections per success, TTFT p95 per minute) 0.92 over 30 windows; reuse 0.45; TTFT p95 1.09 s
    return with_(healthy(), churn={"windows": 30, "spearman_ttft_p95": 0.92, "slope": 900.0,
                                   "new_connections_per_success": 0.55},
                 buckets__ttft=bucket(400.0, 1090.0), buckets__t_conn=bucket(0.0, 600.0))


def post_processing() -> dict:
    # t_post median 2.6 s, share 0.38
    return with_(healthy(), buckets__t_post=bucket(2600.0, 3400.0),
                 dominance__t_post={"p50_share": 0.38, "p95_share": 0.3})


def network_overhead() -> dict:
    # network share of first token 0.89, TTFT ~750 ms
    return with_(healthy(), stages__network_share_of_first_token=0.89, stages__prep_share_of_first_token=0.03,
                 buckets__ttft=bucket(700.0, 800.0))


def noisy_tenant() -> dict:
    # one tenant holds 63% of busy slots during backlog with 25% of arrivals; others' queue p95 3.5 s in its burst
    evidence = with_(healthy(), buckets__t_queue=bucket(0.0, 2900.0), dominance__t_queue={"p50_share": 0.0, "p95_share": 0.35},
                     gap_fraction={"service": 0.02, "instances": {"gpu-0": 0.02}, "backlog_seconds": 240.0})
    evidence["tenants"] = [
        {"tenant": "noisy", "count": 600, "ttft_p95": 300.0, "ttft_p99": 400.0, "total_p95": 7000.0, "total_p99": 9000.0},
        {"tenant": "alice", "count": 900, "ttft_p95": 3800.0, "ttft_p99": 4500.0, "total_p95": 10500.0, "total_p99": 12000.0},
        {"tenant": "bob", "count": 900, "ttft_p95": 3700.0, "ttft_p99": 4400.0, "total_p95": 10400.0, "total_p99": 11800.0},
    ]
    evidence["noisy_neighbours"] = [
        {"tenant": "noisy", "in_flight_share_during_backlog": 0.63, "others_t_queue_p95": 3500.0}]
    return evidence
