"""The Overview page's numbers: the service's request rate, error share and TTFT / total percentiles over time,
each bucket's distribution (the whole scope's and per route), and its time across layers as a gateway.

headline() is the part the weekly review and the alert kinds read too: the scope's attempts and their buckets;
quantile() one bucket's percentile per route or tenant, the percentile alert kind's.
"""
from dataclasses import dataclass

from django.conf import settings

from analysis.evidence_types import Layers
from analysis.reads import layers, queries
from analysis.scope import Scope
from analysis.stats import series_width_ms
from store.concurrent import gather

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
