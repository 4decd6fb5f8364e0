"""Scheduler: each instance's queue depth, in-flight and cap over time, and gap_fraction (backlog while slots
sat idle). The sweep is the instance's whole state, so route and tenant filters do not apply here."""
from django.views.decorators.http import require_GET

from analysis.panels import scheduler as numbers
from dashboard import charts, incidents
from dashboard.access import page
from dashboard.incident_charts import with_bands


@require_GET
@page
def scheduler(request, page):
    s, window, bands = page.kept(numbers.build), (page.filters.start, page.filters.end), incidents.bands(page)
    engine = s.engine and {**s.engine, "chart": ("engine-queue",
                                                  charts.engine_queue_chart(s.engine["minutes"], window))}
    return page.render("dashboard/scheduler.html", {
        "gaps": s.gaps, "instances": s.instances, "others": s.others, "width_s": s.width_ms / 1000,
        "hidden": s.hidden, "max_charts": numbers.MAX_INSTANCE_CHARTS, "threshold": s.threshold,
        "uncapped": s.uncapped, "engine": engine,
        "backlog": with_bands([("backlog", charts.backlog_chart(
            s.backlog, f"Backlog per {s.width_ms // 1000} s bucket, summed over instances", window))], bands)[0],
        "charts": with_bands([(f"instance-{i}", charts.scheduler_chart(series, one["label"], one["gap_fraction"],
                                                                        one["cap"], window))
                              for i, (one, series) in enumerate(s.shown)], bands),
    })
