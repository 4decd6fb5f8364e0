"""Demo traffic for `up --demo`: an hour of mixed traffic with incidents, then a live trickle.

Four services, several tenants; each service's hour is one continuous simulation, three of them with an
incident of a different cause after 20+ minutes of normal traffic, and llm-70b slow all hour without one
(scenarios.DEMO_SERVICES), so every page, the incident list included, has something to show. Beside them one
two-layer pair (scenarios.DEMO_LAYERED): edge-gateway calling edge-engine in one trace, with a slow hop between them
after 35 minutes, for the service map and the cross-layer buckets.
"""
import logging
import threading
import time
import zlib

from simulator.emit import Emitter, make_exporter
from simulator.engine_metrics import EngineMetrics, make_metric_exporter
from simulator.incidents import parse_incident
from simulator.model import simulate
from simulator.runner import run_simulation
from simulator.scenarios import DEMO_LAYERED, DEMO_SERVICES

log = logging.getLogger(__name__)
HOUR_S, LIVE_RPS = 3600.0, 0.5
PROGRESS_S = 20.0  # a progress line this often while the hour loads


def fresh_seed() -> int:
    """A seed per demo start: run ids embed the seed, so a restart or the live trickle never reuses the
    preloaded hour's run ids (reused ids would merge unrelated requests into one retried run)."""
    return int(time.time()) % 1_000_000 * 100


def preload(endpoint: str, key: str, stop: threading.Event, base_ns: int, progress=None) -> tuple[int, int]:
    """Send the hour of demo traffic from base_ns; returns (runs, spans). progress(runs, expected runs, spans) is
    called every PROGRESS_S seconds."""
    seed = fresh_seed()
    emitter = Emitter(make_exporter(endpoint, key, "http"), base_ns, seed=seed)
    metric_exporter = make_metric_exporter(endpoint, key, "http")
    every = [(s, scenario, incidents, False) for s, (scenario, incidents) in DEMO_SERVICES.items()]
    every += [(s, scenario, incidents, True) for s, (scenario, incidents) in DEMO_LAYERED.items()]
    runs, expected, told = 0, sum(scenario.rps for _, scenario, _, _ in every) * HOUR_S, time.monotonic()
    for service, scenario, incidents, layers in every:
        specs = [parse_incident(text) for text in incidents]
        # the engine's metrics of the hour too (two layers: the engine's)
        engine = EngineMetrics(scenario, f"{service}-engine" if layers else service, base_ns, 0.0, HOUR_S)
        for run in simulate(scenario, HOUR_S, seed=seed, service=service, incidents=specs, layers=layers):
            if stop.is_set():
                return runs, emitter.close()[0]
            engine.observe(run)
            if layers:
                emitter.emit_layers(run)
            else:
                emitter.emit(run, cap=scenario.cap)
            runs += 1
            if progress is not None and time.monotonic() - told >= PROGRESS_S:
                told = time.monotonic()
                progress(runs, expected, emitter.processor.exported)
        engine.export(metric_exporter)
    return runs, emitter.close()[0]


def _trickle(endpoint: str, key: str, service: str, stop: threading.Event, base_ns: int) -> None:
    """The service's live traffic from base_ns (the end of the preloaded hour): the minutes the preload took are
    sent at once, at the trickle's rate, so the charts have no hole, then it goes on in real time. A two-layer pair
    (DEMO_LAYERED) goes on at two layers."""
    layers = service in DEMO_LAYERED
    base = (DEMO_LAYERED if layers else DEMO_SERVICES)[service][0]
    scenario = base.at_rps(min(LIVE_RPS, base.rps))  # the service's own base: llm-70b stays slow
    seed = fresh_seed() + 50  # the preload uses fresh_seed() of the same start
    emitter = Emitter(make_exporter(endpoint, key, "http"), base_ns, seed=seed + zlib.crc32(service.encode()) % 1000)
    run_simulation(emitter, scenario, 30 * 86400.0, seed, service, live=True, stop=stop, layers=layers)
    emitter.close()


def start(endpoint: str, key: str, out, ready=None) -> threading.Event:
    """Preload (a progress line every PROGRESS_S), then keep a live trickle per service from where the hour ended,
    in background threads; ready() is called once the hour is loaded. Set the event to stop."""
    stop = threading.Event()
    end_ns = time.time_ns()  # the preloaded hour ends here, and the trickle goes on from here

    def progress(runs: int, expected: float, spans: int) -> None:
        share = min(runs / expected, 0.99)
        left = (time.monotonic() - began) / share * (1 - share) if share else 0
        out.write(f"demo: {spans:,} spans sent, {share:.0%} of the hour, about {left / 60:.0f} min left\n")
        out.flush()

    def main():
        runs, spans = preload(endpoint, key, stop, end_ns - int(HOUR_S * 1e9), progress)
        out.write(f"demo: loaded an hour of traffic ({runs} requests, {spans} spans) in {time.monotonic() - began:.0f}s\n")
        if ready is not None:
            ready()
        out.flush()
        threads = [threading.Thread(target=_trickle, args=(endpoint, key, s, stop, end_ns), daemon=True)
                   for s in [*DEMO_SERVICES, *DEMO_LAYERED]]
        for t in threads:
            t.start()

    began = time.monotonic()

    threading.Thread(target=main, name="demo-traffic", daemon=True).start()
    return stop
