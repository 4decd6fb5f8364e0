"""The typed evidence of one service window (what analysis.diagnosis.evidence.collect returns, what the diagnosis reads).

Every record is a frozen dataclass read through attributes, so a misspelt name raises AttributeError instead of
reading as "unknown". A value the spans cannot give is None, never 0. `to_json()` is the JSON of the diagnosis
answer (docs/diagnosis.md; the API, the diagnose command and the stored WindowDiagnosis): keys in field order.
`from_json()` reads that JSON back; missing keys are unknown, an unexpected key raises TypeError.
The per-bucket records take their field names from analysis.buckets, the one list of bucket names.

Lists that grow with cardinality (tenants, noisy_neighbours, gap_fraction.instances) hold at most ANALYSIS_TOP_N
entries plus one named OTHERS that pools the rest: its `values` says how many it holds. Every other entry has no
`values` key in the JSON (None here).
"""
from __future__ import annotations

import types
import typing
from dataclasses import asdict, dataclass, field, fields, make_dataclass
from functools import cache

from analysis import buckets as names

LEVELS = ("p50", "p95", "p99")
OTHERS = "__others__"  # the entry pooling the values past the top N of a list (not a tenant, not an instance)
SEGMENT_BUCKETS = ("ttft", "t_first_token", "t_queue", "t_stream", "total")  # a segment's quantiles, in JSON order
TAIL_BUCKETS = ("total", "ttft", "t_queue")  # a tenant's tails (p95 and p99), in JSON order


class Record:
    """Base of the evidence records: JSON out and back in."""
    __slots__ = ()

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict):
        """The record of `data` (its to_json shape); a missing key is unknown: None, 0, empty, or a record of
        unknowns. TypeError for a key the record does not have."""
        hints = _hints(cls)
        if unexpected := set(data) - set(hints):
            raise TypeError(f"{cls.__name__} has no {', '.join(sorted(unexpected))}")
        return cls(**{name: _load(kind, data[name]) if name in data else _unknown(kind)
                      for name, kind in hints.items()})


@cache
def _hints(cls) -> dict:
    return {f.name: typing.get_type_hints(cls)[f.name] for f in fields(cls)}


def _optional(kind):
    """X for `X | None`, else None."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in typing.get_args(kind):
        return next(a for a in typing.get_args(kind) if a is not type(None))
    return None


def _load(kind, value):
    if (inner := _optional(kind)) is not None:
        return None if value is None else _load(inner, value)
    if isinstance(kind, type) and issubclass(kind, Record):
        if not isinstance(value, dict):
            raise TypeError(f"{kind.__name__} from {value!r}")
        return kind.from_json(value)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is dict:
        return {k: _load(args[1], v) for k, v in value.items()}
    if origin is list:
        return [_load(args[0], v) for v in value]
    return value


def _unknown(kind):
    if _optional(kind) is not None:
        return None
    if isinstance(kind, type) and issubclass(kind, Record):
        return kind.from_json({})
    return (typing.get_origin(kind) or kind)()  # dict, list, int, float, str: empty or 0


def is_others(entry) -> bool:
    """True for the entry of a bounded list that pools the values past its top N (a TenantTail, NoisyNeighbour or
    InstanceGap with `values`): it is no tenant or instance, so no finding may name it."""
    return entry.values is not None


def _record(name: str, spec: list[tuple[str, object]], doc: str) -> type:
    """A frozen record whose fields come from a list of names (the bucket names live in analysis.buckets)."""
    cls = make_dataclass(name, spec, bases=(Record,), frozen=True, slots=True)
    cls.__module__, cls.__doc__ = __name__, doc
    return cls


@dataclass(frozen=True, slots=True)
class Window(Record):
    start: str  # ISO 8601, UTC
    end: str
    seconds: float
    route: str  # "" when not narrowed
    tenant: str


@dataclass(frozen=True, slots=True)
class BucketStats(Record):
    """One bucket's distribution in ms; count 0 and None elsewhere when no value is known."""
    p50: float | None
    p95: float | None
    p99: float | None
    mean: float | None
    count: int


@dataclass(frozen=True, slots=True)
class Share(Record):
    """One bucket's part of request time (0..1); see analysis.diagnosis.evidence.dominance."""
    p50_share: float | None
    p95_share: float | None
    median_request_share: float | None


Buckets = _record("Buckets", [(b, BucketStats) for b in names.ALL], "BucketStats per bucket (analysis.buckets.ALL).")
Dominance = _record("Dominance", [(b, Share) for b in names.PARTS], "Share per bucket of request time (PARTS).")
Segment = _record("Segment",
                  [("count", int)] + [(f"{b}_{lvl}", float | None) for b in SEGMENT_BUCKETS for lvl in LEVELS],
                  "One prompt-length segment: attempts, and p50/p95/p99 (ms) of SEGMENT_BUCKETS.")
TenantTail = _record("TenantTail", [("tenant", str), ("count", int)]
                     + [(f"{b}_{lvl}", float | None) for b in TAIL_BUCKETS for lvl in ("p95", "p99")]
                     + [("values", int | None, field(default=None))],
                     "One tenant: attempts, and p95/p99 (ms) of TAIL_BUCKETS; values: how many tenants the OTHERS "
                     "entry pools (None for a tenant).")


@dataclass(frozen=True, slots=True)
class Stages(Record):
    prep_share_of_first_token: float | None
    network_share_of_first_token: float | None
    post_stage_share_of_post: float | None
    retrieval_ms_p50: float | None
    retrieval_ms_p95: float | None
    tool_ms_p50: float | None
    tool_ms_p95: float | None


@dataclass(frozen=True, slots=True)
class Decode(Record):
    ms_per_output_token_p50: float | None
    ms_per_output_token_p95: float | None
    count: int


@dataclass(frozen=True, slots=True)
class InstanceGap(Record):
    gap_fraction: float | None
    backlog_seconds: float
    cap: int | None
    values: int | None = None  # how many instances the OTHERS entry pools (None for an instance)


@dataclass(frozen=True, slots=True)
class GapFraction(Record):
    service: float | None
    instances: dict[str, InstanceGap]
    backlog_seconds: float
    # "traces" (the queued/admitted sweep, exact) or "engine metrics" (the engine's gauges, when the traces carry no
    # scheduler events: sampled, see analysis.reads.engine_series.scheduler_from_metrics)
    source: str = "traces"


@dataclass(frozen=True, slots=True)
class Engine(Record):
    """What the serving engine's own metrics say over the window (analysis.reads.engine_series); None: not measured."""
    sources: list = field(default_factory=list)  # engines recognised from metric names, e.g. ["vllm", "dcgm"]
    instances: int = 0  # instances with any engine metric in the window
    kv_cache_usage_p95: float | None = None  # fraction 0..1, over instance-minutes
    kv_cache_usage_max: float | None = None
    preemptions_per_min: float | None = None  # summed over instances
    preemption_growth: float | None = None  # preemptions/min in the window's second half minus its first half
    prefix_cache_hit_rate: float | None = None  # 0..1
    gpu_utilization_mean: float | None = None  # 0..1
    gpu_memory_used_share_max: float | None = None  # max over instance-minutes of used / (used + free)
    gpu_memory_used_bytes_at_max: float | None = None  # used and used + free in that instance-minute
    gpu_memory_total_bytes_at_max: float | None = None
    restarts: int | None = None  # container restarts + process starts inside the window
    process_starts: list = field(default_factory=list)  # [instance, ISO instant] of process starts in the window
    queue_depth_mean: float | None = None
    queue_empty_share: float | None = None  # share of instance-minutes whose mean waiting < 0.5
    in_flight_mean: float | None = None


@dataclass(frozen=True, slots=True)
class Churn(Record):
    windows: int
    new_connections_per_success: float | None
    spearman_ttft_p95: float | None
    spearman_ttft_stddev: float | None
    spearman_first_token_p95: float | None
    slope: float | None


@dataclass(frozen=True, slots=True)
class NoisyNeighbour(Record):
    tenant: str
    in_flight_share_during_backlog: float | None
    others_t_queue_p95: float | None
    values: int | None = None  # how many tenants the OTHERS entry pools (None for a tenant)


@dataclass(frozen=True, slots=True)
class Retries(Record):
    t_retry: BucketStats
    runs: int
    attempts: int
    rate: float | None
    runs_with_retries_share: float | None
    failed_attempts: int
    causes: dict[str, int]
    wasted_input_tokens: int | None
    wasted_output_tokens: int | None
    wasted_tokens: int | None
    spearman_retries_queue_depth: float | None
    # runs of a client span form whose tries are not visible (no HTTP client children, no run keys): the client's own
    # retries may hide inside them. Set by analysis.diagnosis.service from the coverage; None: not known
    hidden_runs: int | None = None


@dataclass(frozen=True, slots=True)
class Layers(Record):
    """The service as a gateway: its calls seen at both layers (analysis.reads.layers); None: not measured."""
    linked: int = 0  # its attempts that are calls linked to an engine's attempt in the same trace
    seen_at_one_layer: int = 0  # its attempts without one (no engine span under them, or none traced)
    t_gateway_p50: float | None = None  # ms: its server span outside its calls
    t_gateway_p95: float | None = None
    t_network_ttft_p50: float | None = None  # ms: the call's TTFT minus the engine's
    t_network_ttft_p95: float | None = None
    t_network_total_p50: float | None = None  # ms: the call's total minus the engine's
    t_network_total_p95: float | None = None
    gateway_share: float | None = None  # p50 of t_gateway / (t_gateway + the call's total), per request
    network_share_of_ttft: float | None = None  # t_network_ttft p95 / the linked calls' TTFT p95
    engines: list = field(default_factory=list)  # [{"service", "calls", "instances", "call_ttft_p95", ...}]


@dataclass(frozen=True, slots=True)
class Evidence(Record):
    """Everything the diagnosis reads about one service window (see analysis.diagnosis.evidence.collect)."""
    window: Window
    requests: int
    buckets: Buckets
    dominance: Dominance
    segments: dict[str, Segment]  # by label, ascending prompt length ("unknown": no input_tokens)
    stages: Stages
    decode: Decode
    gap_fraction: GapFraction  # instances: the ANALYSIS_TOP_N with the most backlog, by name, then OTHERS
    churn: Churn
    tenants: list[TenantTail]  # most requests first (at most ANALYSIS_TOP_N, outliers kept first), then OTHERS
    noisy_neighbours: list[NoisyNeighbour]  # most slot time during backlog first (ANALYSIS_TOP_N), then OTHERS
    retries: Retries
    success_rate: float | None
    successful_runs_per_hour: float | None
    cost_per_success_usd: float | None = None  # set by analysis.diagnosis.service from C_hour
    engine: Engine = field(default_factory=Engine)  # the engine's metrics (analysis.reads.engine_series)
    instance_starts: list = field(default_factory=list)  # [instance, ISO first attempt] of instances started in it
    cold_start_share: float | None = None  # share of TTFT outliers in the minutes after an instance started
    layers: Layers = field(default_factory=Layers)  # the calls to engines seen at both layers (analysis.reads.layers)

    def to_json(self) -> dict:
        data = asdict(self)
        if not self.requests:
            data["dominance"] = {}  # TRICKY: the JSON of a window without attempts has always had no bucket here
        # TRICKY: only the OTHERS entries carry "values": every other entry keeps the keys it has always had
        for entry in data["tenants"] + data["noisy_neighbours"] + list(data["gap_fraction"]["instances"].values()):
            if entry["values"] is None:
                del entry["values"]
        return data
