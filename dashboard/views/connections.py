"""Connections: new connections per success against TTFT per 1-minute window, with the correlations the
diagnosis's connection_churn branch reads (taken from analysis.diagnosis.evidence.churn, not recomputed)."""
from django.views.decorators.http import require_GET

from analysis.diagnosis import evidence
from analysis.reads import queries as analysis_queries
from analysis.diagnosis.thresholds import configured
from dashboard import charts, scheduling
from dashboard.access import page
from analysis.scope import Scope


@require_GET
@page
def connections(request, page):
    f = page.filters
    minutes = analysis_queries.churn_windows(Scope(page.project.pk, f.service, f.start, f.end, route=f.route, tenant=f.tenant))
    churn = evidence.churn(minutes)
    points = evidence.churn_windows_kept(minutes)
    trend = scheduling.trend_line(points, "new_per_success", "ttft_p95", churn.slope)
    t = configured()
    return page.render("dashboard/connections.html", {
        "churn": churn, "minutes": len(minutes), "min_successes": evidence.MIN_WINDOW_SUCCESSES,
        "thresholds": {"per_success": t.new_connections_per_success, "spearman": t.churn_spearman},
        "totals": {k: sum(m[k] for m in minutes) for k in ("attempts", "new_connections", "successes")},
        "scatter": [
            ("churn-p95", charts.churn_scatter(points, "ttft_p95", "TTFT p95", churn.spearman_ttft_p95, trend)),
            ("churn-stddev", charts.churn_scatter(points, "ttft_stddev", "TTFT stddev", churn.spearman_ttft_stddev)),
        ] if points else [],
        "series": ("churn-series", charts.churn_series(minutes, "New connections per success and TTFT p95 per minute",
                                                       (f.start, f.end))),
    })
