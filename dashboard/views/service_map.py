"""Service map: which services call which across layers (analysis/reads/layers.py), with their rates and the time
between the layers; every pair of the project in the window, the selected service's first."""
from django.views.decorators.http import require_GET

from analysis.reads import layers
from dashboard import charts
from dashboard.access import page


@require_GET
@page(needs_service=False)
def service_map(request, page):
    f = page.filters
    seconds = (f.end - f.start).total_seconds()
    edges = layers.edges(page.project.pk, f.start, f.end)
    rows = [{"edge": e, "rate": e.calls / seconds if seconds else None,
             "mine": f.service in (e.gateway, e.engine)} for e in edges]
    rows.sort(key=lambda r: not r["mine"])  # stable: the selected service's pairs first, each most calls first
    return page.render("dashboard/service_map.html", {
        "rows": rows, "chart": ("service-map", charts.service_map(edges)) if edges else None})
