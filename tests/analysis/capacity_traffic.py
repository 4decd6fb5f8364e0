"""Simulated traffic whose capacity numbers are known: sent through the real OTel SDK encoders and ingest path (as
tests/simulated.py does), materialized, and kept so the truth is worked out from the simulated runs themselves.

The truth follows the worksheet's definitions (docs/capacity.md) on the simulator's own instants, never on the store:
a run began when its first attempt was queued, minutes are UTC minutes, an instance is up from its first attempt or
engine sample to its last.
"""
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from analysis.rollups.materialize import materialize
from ingest import metrics as metrics_in
from ingest.pipeline import get_writer
from simulator.emit import Emitter
from simulator.engine_metrics import EngineMetrics
from simulator.runner import run_simulation
from simulator.scenarios import Scenario
from tests.simulated import InProcessExporter, InProcessMetricExporter

MINUTE_NS = 60_000_000_000


@dataclass
class Sent:
    """What was sent: the runs, and the instants of the simulated clock's 0 and end (aware UTC)."""
    scenario: Scenario
    service: str
    base_ns: int
    seconds: float
    runs: list = field(default_factory=list)
    metrics: bool = True

    @property
    def start(self) -> datetime:
        return datetime.fromtimestamp(self.base_ns / 1e9, timezone.utc)

    @property
    def end(self) -> datetime:
        return self.start + timedelta(seconds=self.seconds)

    def ns(self, ms: float) -> int:
        return self.base_ns + int(ms * 1_000_000)

    def region(self, index: int) -> str:
        return self.scenario.resource(index).get("cloud.region", "")

    # --- the truth -------------------------------------------------------------------------------------------------
    def runs_of(self, region: str | None = None) -> list:
        """The runs whose final attempt ran in `region` (None: every run)."""
        return [r for r in self.runs if region is None or self.region(r.attempts[-1].instance) == region]

    def peak_rps(self, region: str | None = None) -> float:
        minutes = Counter(self.ns(r.attempts[0].start) // MINUTE_NS for r in self.runs_of(region))
        return max(minutes.values()) / 60

    def mean_rps(self, region: str | None = None) -> float:
        """Runs per second over the simulated stretch: the rate the traffic was sent at."""
        return len(self.runs_of(region)) / self.seconds

    def tokens_in_mean(self, region: str | None = None) -> float:
        return statistics.fmean(r.input_tokens for r in self.runs_of(region))

    def tokens_out_mean(self, region: str | None = None) -> float:
        """Over successful runs: a failed run's final attempt carries no output count."""
        return statistics.fmean(r.output_tokens for r in self.runs_of(region) if r.ok)

    def instances(self, region: str | None = None) -> set[int]:
        return {a.instance for r in self.runs for a in r.attempts if region is None or self.region(a.instance) == region}

    def gpus(self) -> int:
        return self.scenario.gpus or self.scenario.gpu_count or 1

    def gpu_hours(self, region: str | None = None) -> float:
        """Every instance serves from the simulated clock's 0 (or its late start) to the end, on gpus() GPUs."""
        late = self.scenario.late_instance_s
        hours = [(self.seconds - (late if late > 0 and i == self.scenario.instances - 1 else 0)) / 3600
                 for i in self.instances(region)]
        return sum(hours) * self.gpus()

    def batching_factor(self) -> float:
        """Mean sequences in flight per instance over its busy minutes (admitted to released, minute by minute)."""
        in_flight, lo, hi = defaultdict(float), self.base_ns, self.ns(self.seconds * 1000)
        for r in self.runs:
            for a in r.attempts:
                if a.admitted is None:
                    continue
                begin, finish = max(self.ns(a.admitted), lo), min(self.ns(a.released or a.end), hi)
                m = begin // MINUTE_NS
                while m * MINUTE_NS < finish:
                    part = min(finish, (m + 1) * MINUTE_NS) - max(begin, m * MINUTE_NS)
                    in_flight[(a.instance, m)] += max(part, 0)
                    m += 1
        busy = [k for k, v in in_flight.items() if v > 0]
        covered = sum(min((m + 1) * MINUTE_NS, hi) - max(m * MINUTE_NS, lo) for _, m in busy)
        return sum(in_flight[k] for k in busy) / covered


def send(project, key: str, scenario: Scenario, seconds: float, seed: int = 1, service: str = "llm-gateway",
         metrics: bool = True, ends_before: timedelta = timedelta(0)) -> Sent:
    """Send `seconds` of `scenario` into `project` (spans, and the engine's metrics when `metrics`), ending
    `ends_before` now, then materialize; returns what was sent with its runs."""
    base_ns = time.time_ns() - int((seconds + ends_before.total_seconds()) * 1e9)
    sent = Sent(scenario, service, base_ns, seconds, metrics=metrics)
    exporter = InProcessExporter(key)
    emitter = Emitter(exporter, base_ns, seed=seed, cap=scenario.cap)
    engine = EngineMetrics(scenario, service, base_ns, 0.0, seconds) if metrics else None

    def observe(run):
        sent.runs.append(run)
        if engine is not None:
            engine.observe(run)

    run_simulation(emitter, scenario, seconds, seed, service, observe=observe)
    emitter.close()
    exporter.deliver()
    if engine is not None:
        metric_exporter = InProcessMetricExporter(key)
        engine.export(metric_exporter)
        metric_exporter.deliver()
        metrics_in.get_writer().flush(force=True)
    get_writer().flush(force=True)
    materialize(project.id, sent.start - timedelta(hours=1), sent.end + timedelta(hours=1))
    return sent
