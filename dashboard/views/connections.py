"""Connections: new connections per success against TTFT per 1-minute window, with the correlations the
diagnosis's connection_churn branch reads (analysis/panels/connections.py)."""
from django.views.decorators.http import require_GET

from analysis.diagnosis import evidence
from analysis.panels import connections as numbers
from dashboard import charts
from dashboard.access import page


@require_GET
@page
def connections(request, page):
    c, window = page.kept(numbers.build), (page.filters.start, page.filters.end)
    churn = c.churn
    return page.render("dashboard/connections.html", {
        "churn": churn, "minutes": len(c.minutes), "min_successes": evidence.MIN_WINDOW_SUCCESSES,
        "thresholds": c.thresholds, "totals": c.totals,
        "scatter": [
            ("churn-p95", charts.churn_scatter(c.points, "ttft_p95", "TTFT p95", churn.spearman_ttft_p95, c.trend)),
            ("churn-stddev", charts.churn_scatter(c.points, "ttft_stddev", "TTFT stddev", churn.spearman_ttft_stddev)),
        ] if c.points else [],
        "series": ("churn-series", charts.churn_series(
            c.minutes, "New connections per success and TTFT p95 per minute", window)),
    })
