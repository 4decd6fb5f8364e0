"""Simulator speed: generate and send one simulated hour at 20 req/s through OTLP into a running `up`.

    make bench-simulate      (or: .venv/bin/python benchmarks/bench_simulate.py --scenario healthy --rps 20)

Measures the whole `manage.py simulate` command (model + OpenTelemetry SDK + OTLP/HTTP exporter) as a
user runs it, then how long until every span it sent is queryable. Target: under a minute to send.
"""
import argparse
import subprocess
import sys
import time

import requests
from server import PYTHON, ROOT, BenchError, Server


def stored(server: Server) -> int:
    r = requests.get(f"{server.url}/api/v1/ingest/status", headers={"Authorization": f"Bearer {server.key}"}, timeout=30)
    return r.json()["spans_stored"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="healthy")
    p.add_argument("--rps", type=float, default=20.0)
    p.add_argument("--duration", default="1h")
    a = p.parse_args()
    server = Server({})
    try:
        server.start()
        began = time.perf_counter()
        done = subprocess.run(
            [str(PYTHON), "manage.py", "simulate", "--scenario", a.scenario, "--rps", str(a.rps), "--duration", a.duration,
             "--endpoint", f"{server.url}/v1/traces", "--key", server.key],
            cwd=ROOT, env=server.env, capture_output=True, text=True)
        sent_s = time.perf_counter() - began
        if done.returncode:
            raise BenchError(f"simulate failed: {done.stderr[-2000:]}")
        spans = int(done.stdout.split(" spans sent")[0].rsplit(" ", 1)[1])
        while stored(server) < spans:
            time.sleep(0.2)
        stored_s = time.perf_counter() - began
        print(done.stdout.strip())
        print(f"simulate benchmark: {a.duration} of '{a.scenario}' at {a.rps:g} req/s")
        print(f"  generated and sent:  {sent_s:6.1f} s   ({spans:,} spans, {spans / sent_s:,.0f} spans/s)   target < 60 s "
              f"{'ok' if sent_s < 60 else 'MISSED'}")
        print(f"  all queryable after: {stored_s:6.1f} s")
        return 0
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
