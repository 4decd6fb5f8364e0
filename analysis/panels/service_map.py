"""The Service map page's numbers: which services call which across layers (analysis.reads.layers), with their call
rates and the time between the layers; every pair of the project in the window, the scope's service's first."""
from dataclasses import dataclass

from analysis.reads import layers
from analysis.reads.layers import Edge
from analysis.scope import Scope


@dataclass(frozen=True)
class ServiceMap:
    """edges: every (gateway, engine) pair with calls queued in the window, most calls first (layers.edges: calls,
    instances, the cross-layer buckets and the call's and the engine's p95s in ms); rows: per edge {"edge", "rate"
    (calls per second of the window, None for an empty window), "mine" (the scope's service is one of the pair)},
    the scope's service's pairs first."""
    edges: list[Edge]
    rows: list[dict]


def build(scope: Scope) -> ServiceMap:
    """Over the scope's project and window (its route and tenant do not apply: a call is the whole service's)."""
    seconds = (scope.end - scope.start).total_seconds()
    edges = layers.edges(scope.project_id, scope.start, scope.end)
    rows = [{"edge": e, "rate": e.calls / seconds if seconds else None,
             "mine": scope.service in (e.gateway, e.engine)} for e in edges]
    rows.sort(key=lambda r: not r["mine"])  # stable: the selected service's pairs first, each most calls first
    return ServiceMap(edges=edges, rows=rows)
