"""What an SLO costs to read over its 30-day window: `python benchmarks/bench_slos.py [--rps 10] [--services 4]`.

Writes 30 days of request_buckets rows straight into a temp embedded store (INSERT ... SELECT FROM numbers():
`--rps` attempts a second per service (default 10, one service: 26M attempts), 2 % of them slow, 5 % without a TTFT, 1 % failed), marks every hour
materialized, then times analysis.reads.slos.status() of one service's 30-day TTFT SLO (the page's and the review's read:
every attempt of the window plus the last 6 hours per minute), cold (every hour read) and warm (the settled hours'
counts cached: analysis/reads/slo_counts.py), and the burn rates alone (the slo_burn alert's read each minute). Prints
the median of 5 runs each.
"""
import argparse
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.embedded import embedded_store  # noqa: E402

# the window ends at this hour: rows older than CLICKHOUSE_RETENTION_DAYS before now would be dropped by the TTL
END = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
DAYS = 30

ROWS_SQL = """
INSERT INTO request_buckets (project_id, service, instance, tenant, route, model, form, run_id, trace_id, span_id,
  attempt, status, retry_cause, start_at, queued_at, ttft_ms, total_ms, is_final_attempt, run_attempt_count,
  computed_at)
SELECT 1, concat('svc-', toString(number % {services:UInt32})), 'i-1', concat('tenant-', toString(number % 37)),
  '/v1/chat/completions', 'm-8b', 'native', toString(number), toString(number), toString(number), 1,
  if(number % 100 = 7, 'error', 'ok'), '',
  toDateTime64({start:DateTime64(9, 'UTC')}, 9, 'UTC') + toIntervalMicrosecond(toUInt64(number * {us_per_row:Float64})) AS s,
  s, if(number % 20 = 3, NULL, if(number % 50 = 11, 2500, 300 + number % 400)), 1500 + number % 900, 1, 1,
  {computed_at:DateTime64(3, 'UTC')}
FROM numbers({n:UInt64})
"""
MARK_SQL = """
INSERT INTO materialized_hours SELECT 1, {start:DateTime64(3, 'UTC')} + toIntervalHour(number),
  {computed_at:DateTime64(3, 'UTC')} FROM numbers({hours:UInt32})
"""


class Slo:
    project_id, service, route, tenant, signal, threshold_ms, objective, window_days = (
        1, "svc-0", "", "", "ttft", 1000.0, 0.99, DAYS)


def median_seconds(call, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rps", type=float, default=10.0, help="attempts per second per service")
    parser.add_argument("--services", type=int, default=1)
    args = parser.parse_args()
    with embedded_store("bench-slos-", CLICKHOUSE_RETENTION_DAYS=str(DAYS + 2)):
        from analysis.reads import slos
        from store import client

        start = (END - timedelta(days=DAYS)).replace(tzinfo=None)
        n = int(args.rps * args.services * DAYS * 86_400)
        computed_at = END.replace(tzinfo=None)
        began = time.perf_counter()
        client.command(ROWS_SQL, parameters={"services": args.services, "start": start, "n": n,
                                             "us_per_row": DAYS * 86_400e6 / n, "computed_at": computed_at})
        client.command(MARK_SQL, parameters={"start": start, "computed_at": computed_at, "hours": DAYS * 24})
        print(f"{n:,} attempts ({args.services} services x {args.rps:g}/s x {DAYS} days) written in "
              f"{time.perf_counter() - began:.1f} s")
        began = time.perf_counter()
        status = slos.status(Slo(), END)
        print(f"svc-0: {status.counts.requests:,} requests, compliance {status.compliance:.4f}, "
              f"budget remaining {status.budget_remaining:.3f}, burn 1h {status.burn.rates['1h']}")
        print(f"status, cold (every hour read):        {time.perf_counter() - began:.2f} s")
        print(f"status, warm (settled hours cached):   {median_seconds(lambda: slos.status(Slo(), END)):.2f} s")
        print(f"burn rates only (6 hours, per minute): {median_seconds(lambda: slos.status(Slo(), END, window=False)):.2f} s")

if __name__ == "__main__":
    main()
