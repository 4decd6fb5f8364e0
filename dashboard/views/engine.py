"""Engine: the serving engine's own metrics per instance (KV cache, running/waiting, preemptions, GPU utilisation
and memory, restarts) over TTFT p95 on one shared time axis; "not measured" when the service sends none."""
from django.views.decorators.http import require_GET

from analysis.panels import engine as numbers
from dashboard import charts
from dashboard.access import page
from ingest.scrape import targets_of


@require_GET
@page(needs_service=False)
def engine(request, page):
    e, f = numbers.build(page.scope, request.GET.get("instance", "")), page.filters
    return page.render("dashboard/engine.html", {
        "minutes": e.minutes, "instances": e.instances, "instance": e.instance, "summary": e.summary,
        "targets": targets_of(page.project.pk, f.service),
        "charts": charts.engine_charts(e.shown, e.ttft, (f.start, f.end)) if e.minutes else [],
    })
