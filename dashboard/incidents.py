"""What the Incidents pages show of their numbers (analysis/panels/incidents.py): rows of the list, the incident
page's charts and links, and the bands and timeline other pages draw."""
from dataclasses import replace

from django.urls import reverse

from analysis.buckets import PARTS
from analysis.diagnosis.thresholds import configured
from analysis.incidents import headlines, reads
from analysis.panels import incidents as numbers
from dashboard import incident_charts
from dashboard.charts import COLORS
from dashboard.filters import now_minute


def row(incident, now) -> dict:
    """One line of the Incidents table: plain strings, autoescaped by the template."""
    return {"incident": incident, "duration": headlines.duration_text(incident, now),
            "minutes": round(headlines.minutes(incident, now), 1), "cause": headlines.top_cause(incident),
            "scope": headlines.scope_text(incident), "peak": headlines.peak_text(incident)}


def bands(page) -> list[dict]:
    """The selected service's incidents in the page's window, as shaded bands for its time axes."""
    f = page.filters
    return incident_charts.bands(reads.in_window(page.project.pk, f.service, f.start, f.end), now_minute())


def linked(page, incident, runs: list[dict], now) -> list[dict]:
    """The incident's slowest runs, each with a link to its page (None for a run id with "/": dashboard/views/runs.py
    says why)."""
    window = {"range": "", "start": incident.start, "end": incident.end or now, "service": incident.service,
              "tenant": ""}
    return [{**r, "link": (reverse("run", args=[r["run_id"]]) + "?" + page.filters.query(**window))
             if "/" not in r["run_id"] else None} for r in runs]


def page_context(page, incident) -> dict:
    """Everything the incident page shows; sets the page's filters to the incident's service, route and window."""
    now = now_minute()
    n = numbers.of(incident, now)
    (start, end), points, grown = n.window, n.points, n.grown
    f = page.filters = replace(page.filters, service=incident.service, route=incident.route, range="", start=start,
                               end=end)  # the tenant filter stays in the links to other pages, as everywhere
    span = (incident.start, incident.end or now)
    charts = [(f"series-{m}", incident_charts.series_chart(points, m, incident.baseline, span, (start, end)))
              for m in grown]
    charts += [("causes", incident_charts.share_bars(incident.causes, lambda c: c["code"], "Causes: share of the "
                                                     "latency increase", COLORS["t_queue"]))] if incident.causes else []
    charts += [("scope", incident_charts.share_bars(incident.scope, lambda s: f"{s['dimension']}={s['value']}",
                                                    "Scope: share of the excess", "#7570b3", "% of the excess"))
               ] if incident.scope else []
    order = {"bucket": grown[0]} if grown and grown[0] in PARTS else {"sort": "total"}
    runs_link = f.query(range="", start=incident.start, end=span[1], tenant="", **order)
    return {"incident": incident, "summary": row(incident, now), "charts": charts, "grown": grown,
            "runs": linked(page, incident, n.slowest, now), "runs_link": runs_link,
            "measured": n.measured, "silence_minutes": configured().incident_silence_minutes}


def timeline(page) -> dict | None:
    """The selected service's incidents in the page's window: {"chart": (id, spec), "incidents"}, None without any."""
    f, now = page.filters, now_minute()
    found = reads.in_window(page.project.pk, f.service, f.start, f.end)
    if not found:
        return None
    spec = incident_charts.timeline(found, (f.start, f.end), now, "Incidents of this service in the window")
    return {"chart": ("incident-timeline", spec), "incidents": found}
