from django.conf import settings
from django.views.decorators.http import require_GET

from analysis.panels import overview as numbers
from dashboard import charts, incidents, status
from dashboard.access import page
from dashboard.filters import now_minute
from dashboard.incident_charts import with_bands


@require_GET
@page
def overview(request, page):
    o, f = page.kept(numbers.build), page.filters
    rows, window, width = charts.labelled(o.by_route, "(no route)", "routes"), (f.start, f.end), o.width_ms
    return page.render("dashboard/overview.html", {
        "totals": o.totals, "summary": o.headline.buckets, "layers": o.layers, "top_n": settings.ANALYSIS_TOP_N,
        "status": status.overview(page.project, page.busiest, f.start, f.end, now_minute()),
        "charts": with_bands([
            ("stack-p50", charts.stacked_buckets(rows, "p50", "Bucket p50 per route (ms)")),
            ("stack-p95", charts.stacked_buckets(rows, "p95", "Bucket p95 per route (ms)")),
            ("ttft", charts.percentile_lines(o.series, "ttft", "TTFT p50 / p95 / p99 (successful attempts)", window)),
            ("total", charts.percentile_lines(o.series, "total", "Total time p50 / p95 / p99 (successful attempts)",
                                              window)),
            ("rate", charts.rate_chart(o.series, width, f"Requests and errors per {width // 1000} s bucket", window)),
        ], incidents.bands(page), ("ttft", "total", "rate")),
    })
