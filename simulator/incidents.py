"""Incidents: a cause switched on for part of a simulated run, for all traffic or one tenant, route or instance.

An incident is `CAUSE@START+DURATION[:DIM=VALUE]` (START and DURATION like durations.parse_duration: 90s, 40m,
1h; DIM tenant, route or instance). Each cause has an overlay (OVERLAYS): the knob changes that make it the
dominant cause on top of the base scenario *at the base's rate*. Overlays of incidents that overlap in time
apply one after the other, so two causes at once combine. Calibration figures are in docs/simulator.md
("Simulated traffic") and tests/simulator/test_incidents.py.
"""
import re
from dataclasses import dataclass, field
from typing import Callable

from simulator.durations import parse_duration
from simulator.scenarios import Scenario

DIMENSIONS = ("tenant", "route", "instance")
SPEC_RE = re.compile(r"^(?P<cause>[a-z_]+)@(?P<start>[^+]+)\+(?P<duration>[^:]+)(?::(?P<scope>.*))?$")


@dataclass(frozen=True)
class Overlay:
    """What an incident of one cause changes while it is on.

    knobs: base scenario -> the fields to replace (applied to matching attempts only).
    surge: extra arrivals, as a multiple of the base rate, belonging to the scope (an arrival surge keeps
    the service's cap, as a real fleet would). stalls: (mean seconds between, mean ms) scheduler stalls on the
    matching instances. scopes: the dimensions this cause can be limited to.
    """

    description: str
    knobs: Callable[[Scenario], dict] = lambda s: {}
    surge: float = 0.0
    surge_tokens: tuple | None = None  # (prompt, output) medians of the surge's requests; None: the tenant's
    stalls: tuple | None = None
    scopes: tuple = DIMENSIONS
    needs_scope: str = ""
    layers_only: bool = False  # a cause only two layers have (simulate --layers)


OVERLAYS: dict[str, Overlay] = {
    "queue_backlog": Overlay(
        "an arrival surge of 0.8x the base rate: the capped slots fill and requests wait",
        surge=0.8),
    "noisy_tenant": Overlay(
        "one tenant's bulk surge (long prompts, long outputs) takes the slots; the others queue behind it",
        surge=0.25, surge_tokens=(6000, 600), scopes=("tenant",), needs_scope="tenant"),
    "admission_gap": Overlay(
        "the scheduler stalls ~2.5 s every ~4 s per instance: a backlog with idle slots",
        stalls=(4.0, 2500.0), scopes=("instance",)),
    "retry_amplification": Overlay(
        "a client timeout cut to 0.2 s with 4 attempts: slower first tokens time out and are retried",
        knobs=lambda s: {"timeout_s": 0.2, "max_attempts": 4, "backoff_ms": 100.0}),
    "preprocessing": Overlay(
        "a slow prompt builder (on a route: a slow retriever called while building the prompt, inside the "
        "attempt, holding its slot) and a 10x slower tokenizer",
        knobs=lambda s: {"prompt_build_ms": s.prompt_build_ms + 300.0,
                         "tokenize_ms_per_1k": s.tokenize_ms_per_1k * 10}),
    "connection_churn": Overlay(
        "the connection pool stops reusing: handshakes and cold starts in waves",
        knobs=lambda s: {"reuse_probability": 0.45, "churn_wave_minutes": 6.0, "connect_ms": 180.0,
                         "cold_start_ms": 450.0}),
    "prefill_pressure": Overlay(
        "long contexts arrive (a third of prompts ~12k tokens) and fill the KV cache: prefill 3x slower per 1k tokens",
        knobs=lambda s: {"long_prompt_share": 0.3, "prefill_ms_per_1k": s.prefill_ms_per_1k * 3,
                         "kv_pressure": max(s.kv_pressure, 3.0)}),
    "decode_throughput": Overlay(
        "per-token decode 2.5x slower and more sensitive to batch load (needs headroom: see docs/simulator.md)",
        knobs=lambda s: {"decode_ms_per_token": s.decode_ms_per_token * 2.5,
                         "batch_slowdown": max(s.batch_slowdown, 0.6)}),
    "post_processing": Overlay(
        "parsing, validation and persistence after the last token take seconds",
        knobs=lambda s: {"post_ms": s.post_ms + 2200.0, "post_ms_per_1k_output": s.post_ms_per_1k_output + 1500.0}),
    "network_overhead": Overlay(
        "a cross-region hop between gateway and engine (for a tenant: a far-region tenant)",
        knobs=lambda s: {"network_ms": s.network_ms + 650.0}),
    "gateway_overhead": Overlay(
        "two layers: a guardrail check in the gateway, 1.5 s around its call (before and after it)",
        knobs=lambda s: {"gateway_ms": s.gateway_ms + 1500.0}, layers_only=True),
}
CAUSES = tuple(c for c, o in OVERLAYS.items() if not o.layers_only)  # every cause one layer has
LAYERED_CAUSES = tuple(OVERLAYS)


@dataclass(frozen=True)
class IncidentSpec:
    """What was injected: `cause` on for [start_s, start_s + duration_s) of the simulated clock, for all traffic
    (scope None) or for scope = (dimension, value)."""

    cause: str
    start_s: float
    duration_s: float
    scope: tuple | None = None

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s

    def __str__(self) -> str:
        text = f"{self.cause}@{self.start_s:g}s+{self.duration_s:g}s"
        return text + (f":{self.scope[0]}={self.scope[1]}" if self.scope else "")


def parse_scope(text: str) -> tuple:
    """'tenant=acme' -> ('tenant', 'acme'); ValueError for anything else."""
    dim, sep, value = text.partition("=")
    dim, value = dim.strip(), value.strip()
    if not sep or not value:
        raise ValueError(f"a scope looks like tenant=acme, route=/v1/chat/completions or instance=llm-gateway-2, "
                         f"got {text!r}")
    if dim not in DIMENSIONS:
        raise ValueError(f"unknown scope dimension {dim!r}: use one of {', '.join(DIMENSIONS)}")
    return dim, value


def parse_incident(text: str, scope: tuple | None = None) -> IncidentSpec:
    """'network_overhead@40m+20m:tenant=acme' -> IncidentSpec; `scope` applies when the text has none."""
    match = SPEC_RE.match(text.strip())
    if not match:
        raise ValueError(f"an incident looks like CAUSE@START+DURATION[:DIM=VALUE], e.g. network_overhead@40m+20m, "
                         f"got {text!r}")
    if match["cause"] not in OVERLAYS:
        raise ValueError(f"unknown incident cause {match['cause']!r}: use one of {', '.join(LAYERED_CAUSES)}")
    start, duration = parse_duration(match["start"]), parse_duration(match["duration"])
    if duration <= 0:
        raise ValueError(f"an incident needs a duration above 0, got {text!r}")
    spec = IncidentSpec(match["cause"], start, duration, parse_scope(match["scope"]) if match["scope"] else scope)
    check_scope_allowed(spec)
    return spec


def check_scope_allowed(spec: IncidentSpec) -> None:
    overlay = OVERLAYS[spec.cause]
    if overlay.needs_scope and (spec.scope is None or spec.scope[0] != overlay.needs_scope):
        raise ValueError(f"{spec.cause} needs a {overlay.needs_scope} scope, e.g. {spec.cause}@20m+10m:tenant=acme")
    if spec.scope and spec.scope[0] not in overlay.scopes:
        raise ValueError(f"{spec.cause} cannot be scoped by {spec.scope[0]} (it can by {', '.join(overlay.scopes)})")


def instance_names(scenario: Scenario, service: str) -> list[str]:
    """service.instance.id values the emitter writes for this scenario's instances."""
    return [f"{service}-{i + 1}" for i in range(scenario.instances)]


def check_incidents(incidents, scenario: Scenario, duration_s: float, service: str, layers: bool = False) -> None:
    """ValueError for an incident outside [0, duration_s], scoped to a tenant, route or instance the run has not, or
    of a cause only two layers have in a run of one. layers: the run's instances are the engine's
    (`<service>-engine-N`)."""
    known = {"tenant": [t.name for t in scenario.tenants], "route": [r for r, _ in scenario.routes],
             "instance": instance_names(scenario, f"{service}-engine" if layers else service)}
    for spec in incidents:
        if OVERLAYS[spec.cause].layers_only and not layers:
            raise ValueError(f"incident {spec}: {spec.cause} needs two layers (--layers)")
        if spec.start_s < 0 or spec.end_s > duration_s:
            raise ValueError(f"incident {spec} is outside the run (0s to {duration_s:g}s)")
        if spec.scope and spec.scope[1] not in known[spec.scope[0]]:
            dim, value = spec.scope
            raise ValueError(f"incident {spec}: no {dim} {value!r} in this run (it has {', '.join(known[dim])})")


@dataclass
class Active:
    """An incident on the simulated clock of one Simulation (ms)."""

    spec: IncidentSpec
    start_ms: float
    end_ms: float
    overlay: Overlay = field(init=False)

    def __post_init__(self):
        self.overlay = OVERLAYS[self.spec.cause]

    def on(self, t: float) -> bool:
        return self.start_ms <= t < self.end_ms

    def matches(self, service: str, run=None, instance: int | None = None) -> bool:
        """Does this incident reach a run (tenant, route) or an attempt on an instance? Unscoped: everything."""
        if self.spec.scope is None:
            return True
        dim, value = self.spec.scope
        if dim == "instance":
            return instance is not None and f"{service}-{instance + 1}" == value
        return run is not None and getattr(run, dim) == value
