"""Engine: the serving engine's own metrics per instance (KV cache, running/waiting, preemptions, GPU utilisation
and memory, restarts) over TTFT p95 on one shared time axis; "not measured" when the service sends none."""
from django.views.decorators.http import require_GET

from analysis.reads import engine_series
from analysis.reads import queries as analysis_queries
from dashboard import charts
from dashboard.access import page
from ingest.scrape import targets_of
from store.concurrent import gather
from analysis.scope import Scope


@require_GET
@page(needs_service=False)
def engine(request, page):
    f = page.filters
    args = (page.project.pk, f.service, f.start, f.end)
    # side by side on the reader threads (store/concurrent.py)
    minutes, ttft = gather(lambda: engine_series.instance_minutes(Scope(*args)) if f.service else [],
                           lambda: analysis_queries.churn_windows(Scope(*args)) if f.service else [])
    instances = sorted({m.instance for m in minutes})
    instance = request.GET.get("instance", "")
    if instance not in instances:
        instance = ""  # an instance without metrics in this window: show them all
    shown = [m for m in minutes if m.instance == instance] if instance else minutes
    return page.render("dashboard/engine.html", {
        "minutes": minutes, "instances": instances, "instance": instance,
        "summary": engine_series.summary(Scope(page.project.pk, f.service, f.start, f.end)) if minutes else None,
        "targets": targets_of(page.project.pk, f.service),
        "charts": charts.engine_charts(shown, ttft, (f.start, f.end)) if minutes else [],
    })
