"""The capacity worksheet as data: one Scope for the service and one per region, with the latency-vs-load curve.

Every number that could not be computed is None, and `reasons` says why under the field's name.
"""
from dataclasses import dataclass, field
from datetime import datetime

from analysis.capacity.load import LoadCurve
from analysis.windows import iso

UNIT = "runs"  # a request is a run (one logical request, its retries included), counted when its first try began


@dataclass(frozen=True)
class Tokens:
    """Tokens per run: mean and exact p95 over the runs whose final attempt carries the count (`count` of them)."""
    mean: float | None = None
    p95: float | None = None
    count: int = 0

    def to_json(self) -> dict:
        return {"mean": self.mean, "p95": self.p95, "count": self.count}


@dataclass(frozen=True)
class Scope:
    """The worksheet's numbers for the service (region None) or one region ('' : instances without cloud.region).

    peak_rps: the largest minute's runs / 60, at `peak_at`; mean_rps: runs per second from the first run's start to
    the last's; batching_factor: mean sequences in flight per instance while busy; instances: distinct instances
    with traffic or engine metrics; gpu_hours: instance-hours x GPUs per instance; cost_per_1k_requests_usd:
    gpu_hours x the GPU-hour price / runs x 1000."""
    region: str | None
    runs: int = 0
    attempts: int = 0
    peak_rps: float | None = None
    peak_at: datetime | None = None
    mean_rps: float | None = None
    tokens_in: Tokens = Tokens()
    tokens_out: Tokens = Tokens()
    batching_factor: float | None = None
    instances: int = 0
    gpu_hours: float | None = None
    cost_per_1k_requests_usd: float | None = None
    reasons: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        return "all" if self.region is None else self.region or "unknown region"

    def numbers(self) -> dict:
        """The worksheet's fields as JSON (the API's top level, and each entry of its `regions`)."""
        return {"peak_rps": self.peak_rps, "peak_at": iso(self.peak_at) if self.peak_at else None,
                "mean_rps": self.mean_rps, "tokens_in": self.tokens_in.to_json(),
                "tokens_out": self.tokens_out.to_json(), "batching_factor": self.batching_factor,
                "instances": self.instances, "gpu_hours": self.gpu_hours,
                "cost_per_1k_requests_usd": self.cost_per_1k_requests_usd,
                "counts": {"runs": self.runs, "attempts": self.attempts,
                           "attempts_per_run": self.attempts / self.runs if self.runs else None}}


@dataclass(frozen=True)
class Capacity:
    """build()'s answer: the service's Scope, its regions', the GPUs behind gpu_hours, the batching factor's source,
    latency against load, reasons for the None fields and notes on what a number assumes."""
    service: str
    route: str
    start: datetime
    end: datetime
    worksheet: Scope
    regions: list = field(default_factory=list)
    gpus: dict = field(default_factory=dict)  # {"per_instance": {"min", "max"}, "sources": {source: instances}}
    batching_source: str | None = None
    gpu_hour_price_usd: float | None = None
    latency_vs_load: LoadCurve | None = None
    reasons: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def scopes(self) -> list:
        """The service's Scope, then its regions': the worksheet's rows."""
        return [self.worksheet, *self.regions]

    def to_json(self) -> dict:
        """The /api/v1/capacity document."""
        return {"service": self.service, "route": self.route, "start": iso(self.start), "end": iso(self.end),
                "unit": UNIT, **self.worksheet.numbers(),
                "batching_source": self.batching_source, "gpus": self.gpus,
                "gpu_hour_price_usd": self.gpu_hour_price_usd,
                "regions": [{"region": r.region or None, **r.numbers(), "reasons": r.reasons} for r in self.regions],
                "latency_vs_load": self.latency_vs_load.to_json() if self.latency_vs_load else None,
                "reasons": self.reasons, "notes": self.notes}
