from django.conf import settings
from django.views.decorators.http import require_GET

from analysis.reads import layers

from analysis.reads import queries
from analysis.stats import series_width_ms
from dashboard import charts, incidents, status
from dashboard.filters import now_minute
from dashboard.access import page
from dashboard.incident_charts import with_bands
from store.concurrent import gather
from analysis.scope import Scope


@require_GET
@page
def overview(request, page):
    f = page.filters
    args = (page.project.pk, f.service, f.start, f.end)
    width = series_width_ms((f.end - f.start).total_seconds() * 1000, points=120)
    window = (f.start, f.end)
    # side by side on the reader threads (store/concurrent.py)
    series, by_route, summary, across = gather(
        lambda: queries.overview_series(Scope(*args, route=f.route, tenant=f.tenant), width),
        lambda: queries.bucket_distribution_top_values(Scope(*args, route=f.route, tenant=f.tenant), "route", settings.ANALYSIS_TOP_N),
        lambda: queries.bucket_distribution(Scope(*args, route=f.route, tenant=f.tenant))["buckets"],
        lambda: layers.for_gateway(Scope(*args)).evidence())  # the service as a gateway: its time across layers
    rows = charts.labelled(by_route, "(no route)", "routes")
    totals = {"requests": sum(p["requests"] for p in series), "errors": sum(p["errors"] for p in series)}
    totals["error_share"] = totals["errors"] / totals["requests"] if totals["requests"] else None
    return page.render("dashboard/overview.html", {
        "totals": totals, "summary": summary, "layers": across,
        "status": status.overview(page.project, page.busiest, f.start, f.end, now_minute()),
        "top_n": settings.ANALYSIS_TOP_N,
        "charts": with_bands([
            ("stack-p50", charts.stacked_buckets(rows, "p50", "Bucket p50 per route (ms)")),
            ("stack-p95", charts.stacked_buckets(rows, "p95", "Bucket p95 per route (ms)")),
            ("ttft", charts.percentile_lines(series, "ttft", "TTFT p50 / p95 / p99 (successful attempts)", window)),
            ("total", charts.percentile_lines(series, "total", "Total time p50 / p95 / p99 (successful attempts)",
                                              window)),
            ("rate", charts.rate_chart(series, width, f"Requests and errors per {width // 1000} s bucket", window)),
        ], incidents.bands(page), ("ttft", "total", "rate")),
    })
