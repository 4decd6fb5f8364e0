"""Tenants: per-tenant tail latency against the service's, and the noisy-neighbour evidence of the diagnosis."""
from django.views.decorators.http import require_GET

from analysis.diagnosis.recommendations import TENANT_FIXES
from analysis.panels import tenants as numbers
from dashboard import charts
from dashboard.access import page


@require_GET
@page
def tenants(request, page):
    f = page.filters
    noisy = f.end - f.start <= numbers.NOISY_MAX_WINDOW or request.GET.get("noisy") == "1"
    report = page.kept(numbers.build, noisy=noisy)
    service = {"ttft_p95": report.service.ttft.p95, "total_p95": report.service.total.p95}
    top, noisy_top = report.rows[:numbers.CHART_TENANTS], report.noisy[:numbers.CHART_TENANTS]
    return page.render("dashboard/tenants.html", {
        "report": report, "service": service, "fixes": TENANT_FIXES, "noisy": noisy,
        "noisy_max_hours": int(numbers.NOISY_MAX_WINDOW.total_seconds() // 3600),
        "chart_tenants": numbers.CHART_TENANTS,
        "tails_chart": charts.tenant_tails_chart(
            top, service, f"TTFT p95 and total p95 of the {len(top)} busiest tenants vs the service"),
        "slots_chart": charts.slot_share_chart(
            noisy_top, report.thresholds.noisy_in_flight_share, "Busy slots held during backlog vs arrivals"),
    })
