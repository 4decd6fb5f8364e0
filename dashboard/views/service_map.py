"""Service map: which services call which across layers (analysis/panels/service_map.py), with their rates and the
time between the layers; every pair of the project in the window, the selected service's first."""
from django.views.decorators.http import require_GET

from analysis.panels import service_map as numbers
from dashboard import charts
from dashboard.access import page


@require_GET
@page(needs_service=False)
def service_map(request, page):
    found = page.kept(numbers.build)
    return page.render("dashboard/service_map.html", {
        "rows": found.rows, "chart": ("service-map", charts.service_map(found.edges)) if found.edges else None})
