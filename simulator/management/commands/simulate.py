import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from simulator.emit import Emitter, make_exporter
from simulator.engine_metrics import EngineMetrics, make_metric_exporter
from simulator.incidents import check_incidents, parse_incident, parse_scope
from simulator.runner import parse_duration, run_simulation, with_tenants
from simulator.scenarios import LAYERED_PRESETS, PRESETS


class Command(BaseCommand):
    help = ("Send simulated LLM serving traffic (a preset, optionally with incidents) as real OTLP to a "
            "latency_obs endpoint.")

    def add_arguments(self, parser):
        parser.add_argument("--scenario", choices=sorted({*PRESETS, *LAYERED_PRESETS}),
                            help="the preset (required without --incident; with it the default is healthy)")
        parser.add_argument("--incident", action="append", default=[], metavar="CAUSE@START+DURATION[:DIM=VALUE]",
                            help="switch a cause on for part of the run, e.g. network_overhead@40m+20m or "
                                 "network_overhead@40m+20m:tenant=acme (repeatable; overlapping causes combine)")
        parser.add_argument("--scope", metavar="DIM=VALUE", help="limit every --incident without a scope of its own "
                                                                 "to a tenant, route or instance (e.g. tenant=acme)")
        parser.add_argument("--rps", type=float, help="requests per second (default: the preset's); the fleet scales "
                                                       "with it, so the preset's cause stays the dominant one")
        parser.add_argument("--duration", default="30m", help="simulated time: 90s, 30m, 1h (default 30m)")
        parser.add_argument("--tenants", help="a count, or comma-separated tenant names")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--service", help="default llm-gateway (with --layers: llm, which sends llm-gateway and "
                                               "llm-engine)")
        parser.add_argument("--layers", action="store_true",
                            help="two layers in one trace: SERVICE-gateway's server span and calls, SERVICE-engine's "
                                 "vLLM spans under them; the network is between them (docs/simulator.md)")
        parser.add_argument("--endpoint", help="default http://127.0.0.1:8000/v1/traces (grpc: 127.0.0.1:4317)")
        parser.add_argument("--key", help="ingest key (default: the demo key of `make run`)")
        parser.add_argument("--protocol", choices=("http", "grpc"), default="http")
        parser.add_argument("--format", choices=("native", "vllm"), default="native")
        parser.add_argument("--live", action="store_true", help="send in real time instead of as fast as possible")
        parser.add_argument("--no-metrics", action="store_true", help="send spans only, not the engine's metrics")
        parser.add_argument("--metrics-only", action="store_true",
                            help="send only the engine's metrics (vLLM, DCGM names), as a fleet without tracing does")
        parser.add_argument("--regions", help="comma-separated cloud.region values, given to the instances in turn")
        parser.add_argument("--gpus", type=int, default=0,
                            help="GPUs per instance: the gpu.count resource attribute and one DCGM series per GPU")

    def handle(self, *args, **o):
        if not o["scenario"] and not o["incident"]:
            raise CommandError("give --scenario, or --incident (then the base scenario is healthy)")
        name = o["scenario"] or "healthy"
        presets = {**PRESETS, **LAYERED_PRESETS} if o["layers"] else PRESETS
        if name in LAYERED_PRESETS and not o["layers"]:
            raise CommandError(f"--scenario {name} needs two layers: add --layers")
        if name not in presets:  # call_command checks choices only of required options
            raise CommandError(f"argument --scenario: invalid choice: {name!r} "
                               f"(choose from {', '.join(sorted(presets))})")
        if o["layers"] and o["format"] != "native":
            raise CommandError("--layers sends its own forms (the gateway's native calls, the engine's vLLM spans): "
                               "leave out --format")
        scenario = presets[name]
        service = o["service"] or ("llm" if o["layers"] else "llm-gateway")
        engine_service = f"{service}-engine" if o["layers"] else service
        try:
            duration = parse_duration(o["duration"])
            if o["tenants"]:
                scenario = with_tenants(scenario, o["tenants"])
            if o["rps"]:
                scenario = scenario.at_rps(o["rps"])
            if o["regions"] or o["gpus"]:
                regions = tuple(r.strip() for r in (o["regions"] or "").split(",") if r.strip())
                scenario = scenario.with_(regions=regions, gpu_count=max(o["gpus"], 0), gpus=max(o["gpus"], 0))
            scope = parse_scope(o["scope"]) if o["scope"] else None
            incidents = [parse_incident(text, scope) for text in o["incident"]]
            check_incidents(incidents, scenario, duration, service, layers=o["layers"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        key = o["key"] or _demo_key()
        endpoint = o["endpoint"] or ("127.0.0.1:4317" if o["protocol"] == "grpc" else "http://127.0.0.1:8000/v1/traces")
        # the simulated hour ends now (live: starts now), so dashboards show it as recent traffic
        base_ns = time.time_ns() - (0 if o["live"] else int(duration * 1e9))
        emitter = Emitter(make_exporter(endpoint, key, o["protocol"]), base_ns, fmt=o["format"], seed=o["seed"])
        engine = None if o["no_metrics"] else EngineMetrics(scenario, engine_service, base_ns, 0.0, duration)
        started = time.monotonic()
        totals = run_simulation(emitter, scenario, duration, o["seed"], service, live=o["live"],
                                incidents=incidents, observe=engine.observe if engine else None,
                                send_spans=not o["metrics_only"], layers=o["layers"])
        exported, failed = emitter.close()
        points = engine.export(make_metric_exporter(endpoint, key, o["protocol"])) if engine else 0
        elapsed = time.monotonic() - started
        what = scenario.name + "".join(f" + {spec}" for spec in incidents)
        if o["layers"]:
            what += f" at two layers ({service}-gateway, {service}-engine)"
        self.stdout.write(
            f"{what}: {totals.runs} runs, {totals.attempts} attempts, {exported} spans "
            f"sent to {endpoint} in {elapsed:.1f}s ({exported / max(elapsed, 1e-9):,.0f} spans/s)"
            + (f"; {points} metric points of the engine to its /v1/metrics" if engine else "")
        )
        if failed:
            raise CommandError(f"{failed} spans were not accepted by {endpoint}")


def _demo_key() -> str:
    path = settings.DATA_DIR / "demo_key"
    if not path.exists():
        raise CommandError("no --key given and no demo key in the data dir (run `make run` once, or create_api_key)")
    return path.read_text().strip()
