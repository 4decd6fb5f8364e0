"""Prompt length: bucket distributions per prompt-length segment, and the prefill ratio the diagnosis reads."""
from django.views.decorators.http import require_GET

from analysis.panels import prompts as numbers
from dashboard import charts
from dashboard.access import page


@require_GET
@page
def prompts(request, page):
    p = page.kept(numbers.build)
    return page.render("dashboard/prompts.html", {
        "rows": p.rows, "counted": p.counted, "lines": p.lines, "edges": p.edges, "ratio": p.ratio,
        "thresholds": p.thresholds,
        "charts": [
            ("seg-p50", charts.stacked_buckets(p.rows, "p50", "Bucket p50 per prompt length (ms)")),
            ("seg-p95", charts.stacked_buckets(p.rows, "p95", "Bucket p95 per prompt length (ms)")),
            ("seg-ttft", charts.segment_ttft_chart(p.rows, "TTFT p50 / p95 per prompt length (input tokens)")),
        ] if p.rows else [],
    })
