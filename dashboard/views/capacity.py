"""Capacity: the worksheet of the selected service and window (requests per second at peak and on average, tokens,
batching factor, instances, GPU-hours, cost per 1,000 requests), per region, and latency against load with the knee
and the headroom at peak (analysis.capacity.build: the API's numbers). ?format=csv downloads the worksheet (or, with
&table=levels, the load levels)."""
import csv

from django.http import HttpResponse
from django.views.decorators.http import require_GET

from analysis.capacity import export
from analysis.capacity.load import MIN_VALUES
from analysis.panels import capacity as numbers
from dashboard.access import page
from dashboard.capacity_charts import load_chart


@require_GET
@page
def capacity(request, page):
    f = page.filters
    sheet = page.kept(numbers.build, also=(numbers.judged_against(page.scope),))
    if request.GET.get("format") == "csv":
        levels = request.GET.get("table") == "levels"
        return _csv(export.level_rows(sheet) if levels else export.worksheet_rows(sheet),
                    f"capacity-{f.service}-{'levels' if levels else 'worksheet'}.csv")
    curve = sheet.latency_vs_load
    return page.render("dashboard/capacity.html", {
        "sheet": sheet, "w": sheet.worksheet, "scopes": sheet.scopes, "curve": curve, "min_values": MIN_VALUES,
        "chart": ("capacity-load", load_chart(curve)) if curve and curve.levels else None})


def _csv(rows: list[list], filename: str) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename.replace(chr(34), "")}"'
    csv.writer(response).writerows(rows)
    return response
