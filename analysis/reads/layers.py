"""Across layers: a request traced at a gateway and at the engine it called, in one trace (docs/cross-layer.md).

analysis/rollups/materialize.py fills layer_links (materialize_layer_links.sql) with each pair of attempts of two services
in one trace, the gateway's call and the engine's attempt under it, and the buckets between them: t_gateway (the
gateway's server span outside its calls), t_network_ttft and t_network_total (the call's TTFT and total minus the
engine's). This module reads them: per pair of services (the service map), and per gateway service for its
diagnosis and pages, with how many of its attempts were seen at one layer only.
"""
from dataclasses import dataclass, field

from analysis.evidence_types import Layers as LayerEvidence
from analysis.scope import Scope
from analysis.sql_files import sql as _sql
from analysis.windows import utc_naive
from store import client

BUCKETS = ("t_gateway", "t_network_ttft", "t_network_total")


@dataclass(frozen=True)
class Edge:
    """Calls from one service (the gateway) to another (the engine) in a window; ms, None where not measured."""
    gateway: str
    engine: str  # "" for a gateway's calls pooled over its engines
    calls: int
    instances: int
    buckets: dict  # {bucket: {"p50", "p95", "count"}} for BUCKETS
    call_ttft_p95: float | None = None
    engine_ttft_p95: float | None = None
    call_total_p95: float | None = None
    engine_total_p95: float | None = None
    gateway_share_p50: float | None = None  # of t_gateway / (t_gateway + the call's total), per request


@dataclass(frozen=True)
class Layers:
    """One service as a gateway: its calls to engines and the cross-layer buckets, pooled and per engine."""
    attempts: int = 0  # the service's attempts in the window
    linked: int = 0  # of them, calls seen at both layers
    pooled: Edge | None = None  # over every engine it called (None: no call seen at two layers)
    engines: list = field(default_factory=list)  # [Edge] per engine service, most calls first

    @property
    def seen_at_one_layer(self) -> int:
        return max(0, self.attempts - self.linked)

    def bucket(self, name: str, level: str = "p95") -> float | None:
        return self.pooled.buckets[name][level] if self.pooled else None

    def evidence(self) -> LayerEvidence:
        """What the diagnosis reads (analysis.evidence_types.Layers)."""
        p = self.pooled
        if p is None:
            return LayerEvidence(seen_at_one_layer=self.seen_at_one_layer)
        b = p.buckets
        network = b["t_network_ttft"]["p95"]
        return LayerEvidence(
            linked=self.linked, seen_at_one_layer=self.seen_at_one_layer,
            t_gateway_p50=b["t_gateway"]["p50"], t_gateway_p95=b["t_gateway"]["p95"],
            t_network_ttft_p50=b["t_network_ttft"]["p50"], t_network_ttft_p95=network,
            t_network_total_p50=b["t_network_total"]["p50"], t_network_total_p95=b["t_network_total"]["p95"],
            gateway_share=p.gateway_share_p50,
            network_share_of_ttft=network / p.call_ttft_p95 if network is not None and p.call_ttft_p95 else None,
            engines=[_edge_json(e) for e in self.engines])

    def to_json(self) -> dict:
        return {"attempts": self.attempts, "linked": self.linked, "seen_at_one_layer": self.seen_at_one_layer,
                "buckets": self.pooled.buckets if self.pooled else {b: _blank() for b in BUCKETS},
                "engines": [_edge_json(e) for e in self.engines]}


def _params(project_id: int, start, end, service: str = "") -> dict:
    return {"project_id": project_id, "service": service, "start": utc_naive(start), "end": utc_naive(end)}


def _blank() -> dict:
    return {"p50": None, "p95": None, "count": 0}


def _edge(row: dict) -> Edge:
    buckets = {}
    for name in BUCKETS:
        n = int(row[f"{name}_n"])
        p50, p95 = row[name] if n else (None, None)
        buckets[name] = {"p50": p50, "p95": p95, "count": n}
    return Edge(gateway=row["gateway_service"], engine=row["engine_service"], calls=int(row["calls"]),
                instances=int(row["instances"]), buckets=buckets, call_ttft_p95=_num(row["call_ttft_p95"]),
                engine_ttft_p95=_num(row["engine_ttft_p95"]), call_total_p95=_num(row["call_total_p95"]),
                engine_total_p95=_num(row["engine_total_p95"]),
                gateway_share_p50=_num(row["gateway_share_p50"]) if int(row["t_gateway_n"]) else None)


def _num(value) -> float | None:
    # quantileExact over no value gives NaN (or 0 for an all-NULL column, which count tells apart upstream)
    return None if value is None or value != value else float(value)


def _edge_json(e: Edge) -> dict:
    return {"gateway": e.gateway, "engine": e.engine, "calls": e.calls, "instances": e.instances,
            "buckets": e.buckets, "call_ttft_p95": e.call_ttft_p95, "engine_ttft_p95": e.engine_ttft_p95,
            "call_total_p95": e.call_total_p95, "engine_total_p95": e.engine_total_p95,
            "gateway_share_p50": e.gateway_share_p50}


def edges(project_id: int, start, end, service: str = "") -> list[Edge]:
    """Every (gateway, engine) pair with calls queued in [start, end) (service: the pairs it is part of), most
    calls first: the service map."""
    rows = client.query(_sql("layer_edges"), parameters=_params(project_id, start, end, service))
    pairs = [_edge(r) for r in rows if r["gateway_service"] and r["engine_service"]]
    return sorted(pairs, key=lambda e: (-e.calls, e.gateway, e.engine))


def for_gateway(scope: Scope) -> Layers:
    """The scope's service's calls to engines in its window (its route and tenant are not applied): pooled and per
    engine, and its attempts seen at one layer."""
    service = scope.service
    params = _params(scope.project_id, scope.start, scope.end, service)
    rows = [r for r in client.query(_sql("layer_edges"), parameters=params) if r["gateway_service"] == service]
    [(attempts, linked)] = client.query_rows(_sql("layer_calls"), parameters=params)
    pooled = next((_edge(r) for r in rows if not r["engine_service"]), None)
    engines = sorted((_edge(r) for r in rows if r["engine_service"]), key=lambda e: (-e.calls, e.engine))
    return Layers(attempts=int(attempts), linked=int(linked), pooled=pooled if engines else None, engines=engines)
