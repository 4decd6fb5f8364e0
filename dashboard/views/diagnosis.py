import hashlib

from django.core.cache import cache
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_GET

from analysis.diagnosis.service import run_diagnosis
from analysis.errors import AnalysisError
from analysis.models import WindowDiagnosis
from analysis.scope import Scope
from dashboard import flowchart
from dashboard import incidents as incidents_
from dashboard.access import empty_state, page
from dashboard.evidence_links import LINKS, TITLES, verdict_pages
from dashboard.filters import iso, replace
from store.concurrent import beside

LIVE_CACHE_SECONDS = 60  # a reload or a shared link within a minute does not recompute the evidence


@require_GET
# a stored window (?window=ID) need not lie in the selected range; it reads its route picker itself, once it knows
# the window
@page(needs_service=False, ahead=())
def diagnosis(request, page):
    """The flowchart evaluated on the selected window (or, with ?window=ID, on a stored periodic diagnosis)."""
    f = page.filters
    stored = None
    if request.GET.get("window", "").isdigit():
        stored = get_object_or_404(WindowDiagnosis, pk=int(request.GET["window"]), project=page.project)
        f = page.filters = replace(f, service=stored.service, range="", start=stored.start, end=stored.end)
        result, error = stored.result, None
    elif not page.busiest:
        return empty_state(page)
    else:
        with beside(lambda: page.routes):  # the route picker is read beside the diagnosis, not after it
            result, error = live(page.project.pk, f, page.fresh.stamp)
    drawing = flowchart.layout(result["path"] if result else [], result["verdict"] if result else None)
    steps = [{**step, "value_text": flowchart.step_text(step), "links": links(f, LINKS.get(step["node"], []))}
             for step in (result or {}).get("path", [])]
    recent = list(WindowDiagnosis.objects.filter(project=page.project, service=f.service, start__lt=f.end,
                                                 end__gt=f.start).only("start", "end", "verdict").order_by("-end")[:24])
    verdict = (result or {}).get("verdict")
    return page.render("dashboard/diagnosis.html", {
        "result": result, "error": error, "stored": stored, "drawing": drawing, "steps": steps, "recent": recent,
        "differing": [w for w in recent if w.verdict != verdict], "guarded": _guarded(result),
        "evidence": (result or {}).get("evidence", {}), "timeline": incidents_.timeline(page),
        "verdict_links": links(f, verdict_pages(verdict)),
    })


def live(project_id: int, f, stamp: str) -> tuple[dict | None, str | None]:
    """The diagnosis of the filters' window, cached LIVE_CACHE_SECONDS under the window's freshness stamp: newer
    spans of the window change the key, so a cached result never predates them ("" stamp: not cached)."""
    window = f"{project_id}\0{f.service}\0{iso(f.start)}\0{iso(f.end)}\0{f.route}\0{f.tenant}\0{stamp}"
    key = "diagnosis:" + hashlib.sha256(window.encode()).hexdigest()  # user strings never reach the cache backend
    result = cache.get(key) if stamp else None
    if result is None:
        try:
            result = run_diagnosis(Scope(project_id, f.service, f.start, f.end, route=f.route, tenant=f.tenant))
        except AnalysisError as exc:
            return None, exc.message
        if stamp:
            cache.set(key, result, LIVE_CACHE_SECONDS)
    return result, None


def _guarded(result: dict | None) -> bool:
    """Whether the verdict is insufficient_data for too few runs (the sample guard), not for what the spans lack."""
    sample = (result or {}).get("sample") or {}
    return bool(sample) and sample["runs"] < sample["needed"]


def links(f, pages: list[tuple[str, dict]]) -> list[tuple[str, str]]:
    """(title, URL) of `pages` ((URL name, extra query): a node's or a verdict's evidence), for the same service and
    window."""
    return [(TITLES[name], f"{reverse(name)}?{f.query(**extra)}") for name, extra in pages]

