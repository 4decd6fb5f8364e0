"""Prompt length: bucket distributions per prompt-length segment, and the prefill ratio the diagnosis reads."""
from django.conf import settings
from django.views.decorators.http import require_GET

from analysis.diagnosis import evidence
from analysis.reads import queries as analysis_queries
from analysis.buckets import ALL
from analysis.diagnosis.flowchart import prefill_ratio
from analysis.diagnosis.thresholds import configured
from dashboard import charts
from dashboard.access import page
from analysis.scope import Scope

LEVELS = ("p50", "p95")


@require_GET
@page
def prompts(request, page):
    f = page.filters
    edges = list(settings.ANALYSIS_SEGMENT_EDGES)
    segments = analysis_queries.bucket_distribution_by_segment(Scope(page.project.pk, f.service, f.start, f.end, route=f.route, tenant=f.tenant), edges)
    thresholds = configured()
    ratio = prefill_ratio(evidence.segments(segments), thresholds)
    # Ascending prompt length, attempts without input_tokens last (the query puts them first).
    rows = sorted(({"label": s["segment"], **s} for s in segments), key=lambda s: s["segment"] == "unknown")
    counted = [s["segment"] != "unknown" and s["requests"] >= thresholds.prefill_min_count for s in rows]
    # Segments as columns, like the charts' x axis: each bucket reads left to right as prompts grow.
    lines = [(f"{b} {level}", [s["buckets"][b][level] for s in rows]) for b in ALL for level in LEVELS]
    return page.render("dashboard/prompts.html", {
        "rows": rows, "counted": counted, "lines": lines, "edges": edges, "ratio": ratio, "thresholds": thresholds,
        "charts": [
            ("seg-p50", charts.stacked_buckets(rows, "p50", "Bucket p50 per prompt length (ms)")),
            ("seg-p95", charts.stacked_buckets(rows, "p95", "Bucket p95 per prompt length (ms)")),
            ("seg-ttft", charts.segment_ttft_chart(rows, "TTFT p50 / p95 per prompt length (input tokens)")),
        ] if rows else [],
    })
