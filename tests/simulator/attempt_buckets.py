"""Buckets of simulated attempts computed straight from the model's instants (no spans, no store): the fast way
to check what an incident does. Times are ms on the simulated clock; a bucket whose instants are missing is None."""
import math
from collections import defaultdict

MINUTE_MS = 60_000.0
# the bucket each cause's overlay grows (docs/simulator.md)
GROWN = {
    "queue_backlog": "t_queue", "noisy_tenant": "t_queue", "admission_gap": "t_queue", "retry_amplification": "t_retry",
    "preprocessing": "t_first_token", "connection_churn": "ttft", "prefill_pressure": "t_first_token",
    "decode_throughput": "t_stream", "post_processing": "t_post", "network_overhead": "t_first_token",
}


def _conn(a) -> float:
    return 0.0 if a.reused else sum(st.end - st.start for st in a.stages if st.name == "connect")


def buckets(run, a) -> dict:
    """The README's buckets of attempt `a` of `run` (t_retry on the final attempt only; ttft and total too)."""
    admitted, first, last, released = a.admitted, a.first_token, a.last_token, a.released
    final = a is run.attempts[-1]
    return {
        "t_queue": None if admitted is None else admitted - a.start,
        "t_first_token": None if first is None or admitted is None else first - admitted - _conn(a),
        "ttft": None if first is None else first - a.start,
        "t_stream": None if last is None or first is None else last - first,
        "t_post": None if released is None or last is None else released - last,
        "total": None if released is None else released - a.start,
        "t_retry": a.start - run.attempts[0].start if final else None,
    }


def pct(values, p=95):
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def rows(runs, keep=lambda run, attempt: True) -> list[tuple[float, dict]]:
    """(attempt start ms, buckets) of every attempt `keep` accepts."""
    return [(a.start, buckets(r, a)) for r in runs for a in r.attempts if keep(r, a)]


def p95_between(rows_, bucket: str, start_ms: float, end_ms: float):
    return pct([b[bucket] for t, b in rows_ if start_ms <= t < end_ms])


def per_minute(rows_, bucket: str) -> dict[int, float]:
    """Minute index -> p95 of the bucket over attempts that started in it."""
    by_minute = defaultdict(list)
    for t, b in rows_:
        by_minute[int(t // MINUTE_MS)].append(b[bucket])
    return {m: pct(v) for m, v in sorted(by_minute.items())}
