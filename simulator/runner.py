"""Drive a simulation into an emitter: as fast as possible, or in real time (--live)."""
import time
from dataclasses import dataclass, replace

from simulator.durations import parse_duration  # noqa: F401  (the command imports it from here)
from simulator.emit import Emitter
from simulator.model import simulate
from simulator.scenarios import Scenario


def with_tenants(scenario: Scenario, spec: str) -> Scenario:
    """--tenants: a count (tenant-1..N, shares falling like 1/i) or comma-separated names."""
    if spec.isdigit():
        names = [f"tenant-{i}" for i in range(1, int(spec) + 1)]
        shares = [1.0 / i for i in range(1, len(names) + 1)]
    else:
        names = [n.strip() for n in spec.split(",") if n.strip()]
        shares = [1.0] * len(names)
    if not names:
        raise ValueError("--tenants needs a count or names")
    template = scenario.tenants[0]
    return replace(scenario, tenants=tuple(replace(template, name=n, share=s) for n, s in zip(names, shares)))


@dataclass
class Totals:
    runs: int = 0
    attempts: int = 0
    spans: int = 0
    failed: int = 0
    seconds: float = 0.0


def run_simulation(emitter: Emitter, scenario: Scenario, duration_s: float, seed: int, service: str,
                   live: bool = False, stop=None, incidents=(), observe=None, send_spans: bool = True,
                   layers: bool = False) -> Totals:
    """Emit every run of the simulation; live: each when the wall clock reaches its end. observe(run) sees every
    run (the engine's metrics, simulator.engine_metrics); send_spans=False: a fleet that sends only metrics.
    layers: two layers, `<service>-gateway` in front of `<service>-engine` in one trace (Emitter.emit_layers)."""
    totals, started = Totals(), time.monotonic()
    last_flush = started
    for run in simulate(scenario, duration_s, seed=seed, service=service, incidents=incidents, layers=layers):
        if stop is not None and stop.is_set():
            break
        if live:
            wait = emitter.base_ns / 1e9 + run.end / 1000.0 - time.time()
            if wait > 0:
                if stop is not None:
                    stop.wait(wait)
                else:
                    time.sleep(wait)
            if time.monotonic() - last_flush > 1.0:  # in real time, deliver within about a second
                emitter.processor.force_flush()
                last_flush = time.monotonic()
        if observe is not None:
            observe(run)
        if send_spans and layers:
            emitter.emit_layers(run, resource=scenario.resource)
        elif send_spans:
            emitter.emit(run, cap=scenario.cap, resource=scenario.resource)
        totals.runs += 1
        totals.attempts += len(run.attempts)
    totals.seconds = time.monotonic() - started
    return totals
