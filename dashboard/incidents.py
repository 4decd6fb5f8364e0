"""What the Incidents pages show, built from stored incidents (analysis/incidents/) and the analysis reads: rows of
the list, the incident page's context, the Overview's current verdicts and the bands other pages draw."""
from dataclasses import replace
from datetime import timedelta

from django.urls import reverse

from analysis.reads import queries
from analysis.reads import runs as runs_
from analysis.buckets import PARTS
from analysis.incidents import headlines, queue, reads
from analysis.diagnosis.thresholds import configured
from analysis.scope import Scope
from dashboard import incident_charts
from dashboard.charts import COLORS
from dashboard.filters import now_minute

SLOWEST = 10  # runs linked from an incident page
MAX_SERIES = 4  # grown metrics charted per incident
PAD = timedelta(minutes=30)  # context shown around an incident, at least


def row(incident, now) -> dict:
    """One line of the Incidents table: plain strings, autoescaped by the template."""
    return {"incident": incident, "duration": headlines.duration_text(incident, now),
            "minutes": round(headlines.minutes(incident, now), 1), "cause": headlines.top_cause(incident),
            "scope": headlines.scope_text(incident), "peak": headlines.peak_text(incident)}


def bands(page) -> list[dict]:
    """The selected service's incidents in the page's window, as shaded bands for its time axes."""
    f = page.filters
    return incident_charts.bands(reads.in_window(page.project.pk, f.service, f.start, f.end), now_minute())


def window_of(incident, now) -> tuple:
    """The incident page's time axis: the incident with at least PAD (or half its length) on either side."""
    end = incident.end or now
    pad = max(PAD, (end - incident.start) / 2)
    return incident.start - pad, end + pad if incident.end else now


def slowest_runs(page, incident, now) -> list[dict]:
    """The slowest runs inside the incident, by its grown bucket when one grew (else by total), with links."""
    f, end = page.filters, incident.end or now
    grown = [m for m in headlines.grown(incident) if m in PARTS]
    found = runs_.search(page.project.pk, incident.start, end, service=incident.service, route=incident.route,
                         sort=grown[0] if grown else "total", limit=SLOWEST)
    window = {"range": "", "start": incident.start, "end": end, "service": incident.service, "tenant": ""}
    for r in found:  # a run id with "/" gets no link (dashboard/views/runs.py says why)
        r["link"] = (reverse("run", args=[r["run_id"]]) + "?" + f.query(**window)) if "/" not in r["run_id"] else None
    return found


def unjudged(project_id: int, start, end, service: str = "") -> dict | None:
    """What of the window is not judged yet: {"services": count, "since": the first such minute, "names": up to 5},
    None when every minute with traffic is judged (then no incident means none)."""
    found = queue.unjudged_services(project_id, start, end)
    if service:
        found = {service: found[service]} if service in found else {}
    if not found:
        return None
    return {"services": len(found), "since": min(found.values()), "names": sorted(found)[:5]}


def page_context(page, incident) -> dict:
    """Everything the incident page shows; sets the page's filters to the incident's service, route and window."""
    now = now_minute()
    start, end = window_of(incident, now)
    f = page.filters = replace(page.filters, service=incident.service, route=incident.route, range="", start=start,
                               end=end)  # the tenant filter stays in the links to other pages, as everywhere
    # an incident found on a tenant's or an instance's own series is drawn on it, against its baseline
    found_on = (incident.detail or {}).get("slice")
    narrow = {found_on["dimension"]: found_on["value"]} if found_on else {}
    instance = narrow.pop("instance", "")  # no Scope field: an instance's series is a read of its own
    points = queries.incident_series(Scope(page.project.pk, incident.service, start, end, route=incident.route,
                                           **narrow), instance=instance)
    span = (incident.start, incident.end or now)
    grown = headlines.grown(incident)[:MAX_SERIES]
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
            "runs": slowest_runs(page, incident, now), "runs_link": runs_link,
            "measured": any(p["attempts"] for p in points), "silence_minutes": configured().incident_silence_minutes}


def timeline(page) -> dict | None:
    """The selected service's incidents in the page's window: {"chart": (id, spec), "incidents"}, None without any."""
    f, now = page.filters, now_minute()
    found = reads.in_window(page.project.pk, f.service, f.start, f.end)
    if not found:
        return None
    spec = incident_charts.timeline(found, (f.start, f.end), now, "Incidents of this service in the window")
    return {"chart": ("incident-timeline", spec), "incidents": found}
