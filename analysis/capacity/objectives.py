"""The service's latency objective that the capacity worksheet judges load against.

Objectives live in apps on top of analysis (latency budgets in budgets/, SLOs later), which analysis must not import:
those apps register a source here from their AppConfig.ready(), with a rank (lower is asked first: an SLO 10, a
budget 20). Without any, the diagnosis's own TTFT threshold (`ttft_p95_ms`) is the objective, and says so.
"""
from collections.abc import Callable
from dataclasses import dataclass

from analysis.diagnosis.thresholds import configured
from analysis.wording import fmt

METRICS = ("ttft", "total")
LABELS = {"ttft": "TTFT", "total": "total"}


@dataclass(frozen=True)
class Objective:
    """`metric` ("ttft" or "total") at percentile `percentile` (50, 90, 95 or 99) must stay under `threshold_ms`.
    `source`: where it comes from ("slo", "budget", "diagnosis threshold"); `name`: that object's own name."""
    metric: str
    percentile: int
    threshold_ms: float
    source: str
    name: str = ""

    @property
    def label(self) -> str:
        """"TTFT p95 reaches 1 s"'s first words: "TTFT p95"."""
        return f"{LABELS[self.metric]} p{self.percentile}"

    def text(self) -> str:
        """"TTFT p95 under 1 s (latency budget 'seed-003-2.5s')"."""
        origin = f"{self.source} {self.name!r}" if self.name else self.source
        return f"{self.label} under {fmt(self.threshold_ms, 'ms')} ({origin})"

    def to_json(self) -> dict:
        return {"metric": self.metric, "percentile": self.percentile, "threshold_ms": self.threshold_ms,
                "source": self.source, "name": self.name, "text": self.text()}


Source = Callable[[int, str, str], Objective | None]  # (project_id, service, route) -> the objective, or None
_sources: dict[str, tuple[int, Source]] = {}


def register(name: str, rank: int, source: Source) -> None:
    """Ask `source` for a service's objective before the sources of a higher rank (a rerun replaces it by name)."""
    _sources[name] = (rank, source)


def objective(project_id: int, service: str, route: str = "") -> Objective:
    """The first objective a registered source gives for the service (and route), else the diagnosis threshold
    ttft_p95_ms ("Is TTFT high?")."""
    for _, source in sorted(_sources.values(), key=lambda pair: pair[0]):
        found = source(project_id, service, route)
        if found is not None:
            return found
    return Objective("ttft", 95, configured().ttft_p95_ms, "diagnosis threshold", "ttft_p95_ms")
