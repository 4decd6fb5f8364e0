"""The receive tier of production, measured: N receivers (`serve_web` with INGEST_WRITER=off: authenticate,
validate, spool; no chDB in them) and one `serve_writer` process, on one machine, one spool and one chDB data dir.

  accepted (HTTP 200)  the senders (keep-alive threads) split across the receivers, sender n posting to
                       receiver n mod N, as a load balancer would; total spans / time from the first send to
                       the last 200. Every answer must be a 200 without partial_success, else the run fails.
  stored               total spans / time from the first send until the spool holds no segment and no batch
                       (a segment is removed only once its INSERT succeeded); after the writer's drain and exit,
                       the spans table must hold every span once (uniqExact(span_id) == total).
  CPU, peak RSS        utime+stime in the send..stored window and VmHWM of each receiver and of the writer.
  other load           CPU seconds of the machine in that window that none of them nor this process used.

Each run gets a fresh temporary data dir; --receivers 1,2 runs one tier of each size per round, alternating
which goes first, --repeat rounds. --up adds, in each round, `up` on the same workload (everything in one process,
bench_ingest.py's run): the embedded figure beside the tier's, on the same machine at the same time. The workload is built once (benchmarks/payloads.py). The project's rate limit
is off (INGEST_PROJECT_SPANS_PER_SECOND=0): the bench measures the processes, not a project's quota.

    .venv/bin/python benchmarks/bench_receivers.py [--spans 200000] [--batch 500] [--senders 4]
        [--receivers 1,2] [--threads 16] [--writer-threads N] [--repeat 1] [--up] [--server-env INGEST_WRITER_THREADS=1 ...]
"""
from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import parse_rate, send_split  # noqa: E402
from bench_ingest import run_once as run_up  # noqa: E402
from payloads import build_bodies  # noqa: E402
from server import PYTHON, BenchError, Server, free_port, machine_cpu_s, own_cpu_s, proc_figures  # noqa: E402


class Tier(Server):
    """`receivers` × `serve_web` (INGEST_WRITER=off) and one `serve_writer` on a fresh temp data dir."""

    def __init__(self, server_env: dict[str, str], receivers: int, threads: int, writer_env: dict[str, str]):
        super().__init__(server_env)
        self.n, self.threads, self.writer_env = receivers, threads, writer_env
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.urls: list[str] = []

    def start(self) -> None:
        self._manage("migrate", "--noinput", "-v", "0")
        self._manage("migrate_clickhouse")
        self.key = self._manage("create_api_key", "--project", "bench", "--scope", "ingest,read").strip()
        self._spawn("writer", ["serve_writer"], self.writer_env)
        for n in range(self.n):
            port = free_port()
            self._spawn(f"receiver-{n}", ["serve_web", "--host", "127.0.0.1", "--port", str(port), "--threads",
                                          str(self.threads)], {"INGEST_WRITER": "off"})
            self.urls.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 120
        for url in self.urls:
            while not _answers(url):
                self._check_alive()
                if time.monotonic() > deadline:
                    raise BenchError(f"{url} did not answer /healthz within 120 s:\n{self.log_tail()}")
                time.sleep(0.1)

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> None:
        with open(self.dir / f"{name}.log", "wb") as log:
            proc = subprocess.Popen([str(PYTHON), "manage.py", *args], cwd=self.code, env={**self.env, **env},
                                    stdout=log, stderr=subprocess.STDOUT)
        self.procs.append((name, proc))

    def _check_alive(self) -> None:
        for name, proc in self.procs:
            if proc.poll() is not None:
                raise BenchError(f"{name} exited with {proc.returncode}:\n{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.read_text(errors='replace')[-chars:]}" for p in sorted(self.dir.glob("*.log")))

    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc in self.procs}

    def wait_stored(self, timeout_s: float = 600) -> float:
        """The moment the trace spool holds no segment and no batch manifest (all inserted)."""
        spool, deadline = Path(self.env["LATENCY_OBS_DATA_DIR"]) / "spool", time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not any(spool.glob("*.seg")) and not any(spool.glob("*.batch")):
                return time.perf_counter()
            self._check_alive()
            time.sleep(0.05)
        raise BenchError(f"the spool was not drained within {timeout_s:.0f} s")

    def stop_all(self) -> None:
        """SIGTERM the receivers, then the writer (it drains); every exit code must be 0."""
        for name, proc in sorted(self.procs, key=lambda np: np[0] == "writer"):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    raise BenchError(f"{name} did not stop within 120 s of SIGTERM") from None
            if proc.returncode != 0:
                raise BenchError(f"{name} exited with {proc.returncode}:\n{self.log_tail()}")

    def stored_spans(self) -> int:
        code = "from store import client; print(client.query_rows('SELECT uniqExact(span_id) FROM spans')[0][0])"
        return int(self._manage("shell", "-c", code).strip().splitlines()[-1])


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/healthz", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def run_once(bodies: list[bytes], total: int, receivers: int, a, server_env: dict[str, str]) -> dict:
    writer_env = {"INGEST_WRITER_THREADS": str(a.writer_threads)} if a.writer_threads else {}
    tier = Tier(server_env, receivers, a.threads, writer_env)
    try:
        tier.start()
        pids = tier.pids()
        before = {name: proc_figures(pid)[1] for name, pid in pids.items()}
        client_before, machine_before = own_cpu_s(), machine_cpu_s()
        t0, t_accepted = send_split(tier.urls, tier.key, bodies, a.senders)
        t_stored = tier.wait_stored()
        figures = {name: proc_figures(pid) for name, pid in pids.items()}
        client_cpu, machine = own_cpu_s() - client_before, machine_cpu_s() - machine_before
        tier.stop_all()
        stored = tier.stored_spans()
        if stored != total:
            raise BenchError(f"{stored} distinct spans stored, {total} sent")
    except BaseException:
        print(f"--- logs (tail) ---\n{tier.log_tail()}", file=sys.stderr)
        raise
    finally:
        for _, proc in tier.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        tier.stop()  # removes the temp dir
    cpu = {name: figures[name][1] - before[name] for name in pids}
    return {"accepted": total / (t_accepted - t0), "stored": total / (t_stored - t0),
            "accepted_s": t_accepted - t0, "stored_s": t_stored - t0, "cpu": cpu,
            "rss": {name: figures[name][0] for name in pids}, "client_cpu_s": client_cpu,
            "other_cpu_s": max(0.0, machine - sum(cpu.values()) - client_cpu)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--spans", type=int, default=200_000)
    p.add_argument("--batch", type=int, default=500, help="spans per ExportTraceServiceRequest")
    p.add_argument("--senders", type=int, default=4, help="keep-alive sender threads, split across the receivers")
    p.add_argument("--receivers", default="1,2", help="tier sizes to run, comma-separated")
    p.add_argument("--threads", type=int, default=16, help="waitress threads of each receiver")
    p.add_argument("--repeat", type=int, default=1, help="rounds; each runs every tier size once, alternating")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--writer-threads", type=int, default=0,
                   help="INGEST_WRITER_THREADS of serve_writer alone (default: the setting's, 2)")
    p.add_argument("--up", action="store_true", help="also run `up` (one process) on the workload in each round")
    p.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment override for every process of the tier (repeatable)")
    a = p.parse_args()
    sizes = [int(n) for n in a.receivers.split(",")]
    if min(sizes) < 1 or a.spans < 1 or a.batch < 1 or a.senders < max(sizes) or a.repeat < 1:
        p.error("--spans, --batch, --repeat and each receiver count must be >= 1, --senders >= the largest count")
    server_env = {"INGEST_PROJECT_SPANS_PER_SECOND": "0"}
    for item in a.server_env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            p.error(f"--server-env wants KEY=VALUE, got {item!r}")
        server_env[key] = value
    bodies = build_bodies(a.spans, a.batch, a.seed)
    parse = parse_rate(bodies, a.spans)
    print(f"workload: {a.spans:,} spans in {len(bodies)} bodies of {a.batch}, {a.senders} senders; "
          f"protobuf parse floor {parse:,.0f} spans/s", flush=True)
    runs: dict[int, list[dict]] = {n: [] for n in sizes}
    counts = [min(a.batch, a.spans - i * a.batch) for i in range(len(bodies))]
    try:
        for r in range(a.repeat):
            if a.up:
                run = run_up(bodies, counts, a.senders, server_env)
                runs.setdefault(0, []).append(run)
                print(f"round {r + 1}, `up` (one process): accepted {run['accepted']:,.0f} spans/s, stored "
                      f"{run['stored']:,.0f} spans/s, peak RSS {run['rss_mib']:,.0f} MiB, server CPU "
                      f"{run['cpu_window_s']:.1f} s, other load {run['other_cpu_s']:.1f} CPU-s", flush=True)
            for n in (sizes if r % 2 == 0 else sizes[::-1]):
                run = run_once(bodies, a.spans, n, a, server_env)
                runs[n].append(run)
                print(f"round {r + 1}, {n} receiver(s): accepted {run['accepted']:,.0f} spans/s "
                      f"({run['accepted_s']:.2f} s), stored {run['stored']:,.0f} spans/s ({run['stored_s']:.2f} s); "
                      "CPU s " + ", ".join(f"{k} {v:.1f}" for k, v in run["cpu"].items())
                      + "; peak RSS MiB " + ", ".join(f"{k} {v:,.0f}" for k, v in run["rss"].items())
                      + f"; client CPU {run['client_cpu_s']:.1f} s, other load {run['other_cpu_s']:.1f} CPU-s",
                      flush=True)
    except BenchError as exc:
        print(f"\nreceive-tier benchmark FAILED: {exc}", file=sys.stderr)
        return 1
    overrides = " ".join(f"{k}={v}" for k, v in server_env.items())
    if a.writer_threads:
        overrides += f"; serve_writer: INGEST_WRITER_THREADS={a.writer_threads}"
    print(f"\nreceive tier: {a.spans:,} spans, medians of {a.repeat} run(s) (server env: {overrides})")
    for n in sorted(runs):
        med = {k: statistics.median(run[k] for run in runs[n]) for k in ("accepted", "stored")}
        print(f"  {f'{n} receiver(s) + 1 writer' if n else '`up`, one process':<26}: accepted {med['accepted']:>9,.0f} spans/s   "
              f"stored {med['stored']:>9,.0f} spans/s   (each: "
              + " / ".join(f"{run['accepted']:,.0f}, {run['stored']:,.0f}" for run in runs[n]) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
