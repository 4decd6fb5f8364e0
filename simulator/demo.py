"""Demo traffic for `up --demo`: an hour of mixed traffic with incidents, then a live trickle.

Four services, several tenants; each service's hour is one continuous simulation, three of them with an
incident of a different cause after 20+ minutes of normal traffic, and llm-70b slow all hour without one
(scenarios.DEMO_SERVICES), so every page, the incident list included, has something to show.
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
from simulator.scenarios import DEMO_SERVICES

log = logging.getLogger(__name__)
HOUR_S, LIVE_RPS = 3600.0, 0.5


def fresh_seed() -> int:
    """A seed per demo start: run ids embed the seed, so a restart or the live trickle never reuses the
    preloaded hour's run ids (reused ids would merge unrelated requests into one retried run)."""
    return int(time.time()) % 1_000_000 * 100


def preload(endpoint: str, key: str, stop: threading.Event) -> tuple[int, int]:
    """Send the last hour of demo traffic; returns (runs, spans)."""
    seed = fresh_seed()
    base_ns = time.time_ns() - int(HOUR_S * 1e9)
    emitter = Emitter(make_exporter(endpoint, key, "http"), base_ns, seed=seed)
    metric_exporter = make_metric_exporter(endpoint, key, "http")
    runs = 0
    for service, (scenario, incidents) in DEMO_SERVICES.items():
        specs = [parse_incident(text) for text in incidents]
        engine = EngineMetrics(scenario, service, base_ns, 0.0, HOUR_S)  # the engine's metrics of the hour too
        for run in simulate(scenario, HOUR_S, seed=seed, service=service, incidents=specs):
            if stop.is_set():
                return runs, emitter.close()[0]
            engine.observe(run)
            emitter.emit(run, cap=scenario.cap)
            runs += 1
        engine.export(metric_exporter)
    return runs, emitter.close()[0]


def _trickle(endpoint: str, key: str, service: str, stop: threading.Event) -> None:
    base = DEMO_SERVICES[service][0]
    scenario = base.at_rps(min(LIVE_RPS, base.rps))  # the service's own base: llm-70b stays slow
    seed = fresh_seed() + 50  # the preload uses fresh_seed() of the same start
    emitter = Emitter(make_exporter(endpoint, key, "http"), time.time_ns(), seed=seed + zlib.crc32(service.encode()) % 1000)
    run_simulation(emitter, scenario, 30 * 86400.0, seed, service, live=True, stop=stop)
    emitter.close()


def start(endpoint: str, key: str, out) -> threading.Event:
    """Preload, then keep a live trickle per service, in background threads; set the event to stop."""
    stop = threading.Event()

    def main():
        began = time.monotonic()
        runs, spans = preload(endpoint, key, stop)
        out.write(f"demo: loaded an hour of traffic ({runs} requests, {spans} spans) in {time.monotonic() - began:.0f}s\n")
        out.flush()
        threads = [threading.Thread(target=_trickle, args=(endpoint, key, s, stop), daemon=True) for s in DEMO_SERVICES]
        for t in threads:
            t.start()

    threading.Thread(target=main, name="demo-traffic", daemon=True).start()
    return stop
