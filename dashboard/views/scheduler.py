"""Scheduler: each instance's queue depth, in-flight and cap over time, and gap_fraction (backlog while slots
sat idle). The sweep is the instance's whole state, so route and tenant filters do not apply here."""
from django.conf import settings
from django.views.decorators.http import require_GET

from analysis.diagnosis import evidence
from analysis.reads import queries as analysis_queries
from analysis.stats import series_width_ms
from analysis.diagnosis.thresholds import configured
from dashboard import charts, incidents, scheduling
from dashboard.access import page
from dashboard.incident_charts import with_bands
from analysis.scope import Scope


@require_GET
@page
def scheduler(request, page):
    f = page.filters
    width = series_width_ms((f.end - f.start).total_seconds() * 1000, points=150)
    rows = analysis_queries.scheduler_sweep(Scope(page.project.pk, f.service, f.start, f.end), width, limit=settings.ANALYSIS_TOP_N)["instances"]
    gaps = evidence.gap_fraction(rows)  # the diagnosis's own numbers
    instances, others = scheduling.instance_summary(rows, gaps)
    shown, window = instances[:scheduling.MAX_INSTANCE_CHARTS], (f.start, f.end)
    charts_ = [(f"instance-{i}", charts.scheduler_chart(scheduling.instance_series(rows, s["instance"], width),
                                                      s["label"], s["gap_fraction"], s["cap"], window))
               for i, s in enumerate(shown)]
    bands = incidents.bands(page)  # the service's incidents, shaded on every time axis
    engine = scheduling.from_engine(page.project.pk, f.service, f.start, f.end, gaps)
    return page.render("dashboard/scheduler.html", {
        "gaps": gaps, "instances": instances, "others": others, "width_s": width / 1000,
        "hidden": len(instances) - len(shown) + (others["values"] if others else 0),
        "max_charts": scheduling.MAX_INSTANCE_CHARTS, "threshold": configured().gap_fraction,
        "uncapped": [s for s in instances if s["cap"] is None],
        "backlog": with_bands([("backlog", charts.backlog_chart(scheduling.backlog_series(rows, width),
                                                    f"Backlog per {width // 1000} s bucket, summed over instances",
                                                    window))], bands)[0],
        "charts": with_bands(charts_, bands), "engine": engine,
    })
