"""The Overview page's numbers: the service's request rate, error share and TTFT / total percentiles over time,
each bucket's distribution (the whole scope's and per route), and its time across layers as a gateway.

headline() is the part the weekly review and the alert kinds read too: the scope's attempts and their buckets;
quantile() one bucket's percentile per route or tenant, the percentile alert kind's; document() the page's numbers as
GET /api/v1/overview answers them.
"""
from dataclasses import dataclass

from django.conf import settings

from analysis.errors import AnalysisError
from analysis.evidence_types import Layers
from analysis.reads import layers, queries
from analysis.rollups.aggregates import shared_reads
from analysis.scope import Scope
from analysis.stats import series_width_ms
from analysis.windows import check_window
from analysis.wording import fmt
from store.concurrent import gather
from store.reasons import Reason

SERIES_POINTS = 120


@dataclass(frozen=True)
class Headline:
    """The scope's attempts (`requests`) and per bucket of analysis.buckets.ALL its {"p50", "p95", "p99", "mean",
    "count"} in ms (queries.bucket_distribution: exact, or sketched for long windows)."""
    requests: int
    buckets: dict


@dataclass(frozen=True)
class Overview:
    """width_ms: the series' bucket; series: queries.overview_series' points; by_route: the ANALYSIS_TOP_N busiest
    routes' distributions then the rest pooled; totals: {"requests", "errors", "error_share" (None without
    requests)} summed over the series; layers: the service's time across layers (as a gateway)."""
    width_ms: int
    series: list[dict]
    by_route: list[dict]
    headline: Headline
    totals: dict
    layers: Layers


@dataclass(frozen=True)
class Quantile:
    """One bucket's quantile in ms (None when no attempt has the bucket) and the attempts it is over."""
    value_ms: float | None
    requests: int


def quantile(scope: Scope, bucket: str, percentile: int, by: str = "") -> dict[str, Quantile]:
    """`bucket` (a name of analysis.buckets.ALL) at `percentile` (50, 90, 95, 99) per value of `by` (route or tenant;
    anything else: the whole scope, under the key ""), most attempts first; {} without attempts. Over every tenant
    (the scope's tenant is not applied). Exact as the headline's p50 / p95 / p99 of a window under SKETCH_AFTER (the
    same interpolation between ranks): what the percentile alert kind judges."""
    found = queries.bucket_quantile(scope, bucket, percentile / 100, group=by)
    return {key: Quantile(value_ms=value, requests=requests) for key, (value, requests) in found.items()}


def headline(scope: Scope) -> Headline:
    dist = queries.bucket_distribution(scope)
    return Headline(requests=dist["requests"], buckets=dist["buckets"])


def build(scope: Scope) -> Overview:
    width = series_width_ms((scope.end - scope.start).total_seconds() * 1000, points=SERIES_POINTS)
    # side by side on the reader threads (store/concurrent.py)
    series, by_route, head, across = gather(
        lambda: queries.overview_series(scope, width),
        lambda: queries.bucket_distribution_top_values(scope, "route", settings.ANALYSIS_TOP_N),
        lambda: headline(scope),
        lambda: layers.for_gateway(scope).evidence())
    requests, errors = sum(p["requests"] for p in series), sum(p["errors"] for p in series)
    totals = {"requests": requests, "errors": errors, "error_share": errors / requests if requests else None}
    return Overview(width_ms=width, series=series, by_route=by_route, headline=head, totals=totals, layers=across)


def document(scope: Scope) -> dict:
    """GET /api/v1/overview's answer: build()'s numbers as JSON (as_json), the scope's service, route, tenant and
    window beside them. Raises AnalysisError as run_diagnosis does: missing_parameter without a service, bad_date /
    window_too_large for the window, unknown_service (404) when the service has no attempts in it."""
    if not scope.service:
        raise AnalysisError(Reason.MISSING_PARAMETER, "'service' is required")
    check_window(scope.start, scope.end)
    with shared_reads():  # the panel's reads ask the window's core once
        numbers = build(scope)
    if not numbers.headline.requests:
        raise AnalysisError(Reason.UNKNOWN_SERVICE, f"no requests of service {scope.service!r} in this window")
    return {"service": scope.service, "route": scope.route, "tenant": scope.tenant,
            "start": scope.start.isoformat(), "end": scope.end.isoformat(), **as_json(numbers)}


def as_json(o: Overview) -> dict:
    """The numbers the Overview page shows: every duration in ms with _ms in its name, shares 0..1, instants ISO 8601
    UTC, None (null) where not measured. headline: requests and per bucket {"p50_ms", "p95_ms", "p99_ms", "mean_ms",
    "count"}, with "text" (the card's numbers as words); totals: requests, errors, error_share; by_route: the
    stacks' routes ("others": how many routes the pooled row holds); series: its width_ms and points; layers: the
    service's time across layers as a gateway."""
    head, totals = o.headline, o.totals
    text = (f"{totals['requests']} attempts, error rate {fmt(totals['error_share'], '%')}, TTFT p95 "
            f"{fmt(head.buckets['ttft']['p95'], 'ms')}, total p95 {fmt(head.buckets['total']['p95'], 'ms')}")
    return {
        "headline": {"requests": head.requests, "buckets": _buckets_ms(head.buckets), "text": text},
        "totals": dict(totals),
        "by_route": [{"route": r["value"], "others": r["others"], "requests": r["requests"],
                      "buckets": _buckets_ms(r["buckets"])} for r in o.by_route],
        "series": {"width_ms": o.width_ms, "points": [
            {"at": p["at"].isoformat(), "requests": p["requests"], "errors": p["errors"],
             "ttft": _ms(p["ttft"]), "total": _ms(p["total"])} for p in o.series]},
        "layers": _layers_json(o.layers),
    }


def _ms(stats: dict) -> dict:
    """One distribution's stats with the unit in the names: p50 -> p50_ms, mean -> mean_ms; count stays."""
    return {(k if k == "count" else f"{k}_ms"): v for k, v in stats.items()}


def _buckets_ms(buckets: dict) -> dict:
    return {name: _ms(stats) for name, stats in buckets.items()}


def _layers_json(e: Layers) -> dict:
    return {"linked": e.linked, "seen_at_one_layer": e.seen_at_one_layer,
            **{b: {"p50_ms": getattr(e, f"{b}_p50"), "p95_ms": getattr(e, f"{b}_p95")}
               for b in ("t_gateway", "t_network_ttft", "t_network_total")},
            "gateway_share": e.gateway_share, "network_share_of_ttft": e.network_share_of_ttft,
            "engines": [{"engine": x["engine"], "calls": x["calls"], "instances": x["instances"],
                         **{f"{k}_ms": x[k] for k in ("call_ttft_p95", "engine_ttft_p95", "call_total_p95",
                                                      "engine_total_p95")}} for x in e.engines]}
