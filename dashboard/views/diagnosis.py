from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_GET

from analysis.models import WindowDiagnosis
from analysis.panels import diagnosis as numbers
from dashboard import flowchart
from dashboard import incidents as incidents_
from dashboard.access import empty_state, page
from dashboard.evidence_links import LINKS, TITLES, verdict_pages
from dashboard.filters import replace
from store.concurrent import beside


@require_GET
# a stored window (?window=ID) need not lie in the selected range; it reads its route picker itself, once it knows
# the window
@page(needs_service=False, ahead=())
def diagnosis(request, page):
    """The flowchart evaluated on the selected window (or, with ?window=ID, on a stored periodic diagnosis)."""
    if request.GET.get("window", "").isdigit():
        stored = get_object_or_404(WindowDiagnosis, pk=int(request.GET["window"]), project=page.project)
        page.filters = replace(page.filters, service=stored.service, range="", start=stored.start, end=stored.end)
        d = numbers.of_stored(stored)
    elif not page.busiest:
        return empty_state(page)
    else:
        with beside(lambda: page.routes):  # the route picker is read beside the diagnosis, not after it
            d = numbers.build(page.scope)
    f, path = page.filters, (d.result or {}).get("path", [])
    steps = [{**step, "value_text": flowchart.step_text(step), "links": links(f, LINKS.get(step["node"], []))}
             for step in path]
    return page.render("dashboard/diagnosis.html", {
        "result": d.result, "error": d.error, "stored": d.stored, "drawing": flowchart.layout(path, d.verdict),
        "steps": steps, "recent": d.recent, "differing": d.differing, "guarded": d.guarded, "evidence": d.evidence,
        "timeline": incidents_.timeline(page), "verdict_links": links(f, verdict_pages(d.verdict)),
    })


def links(f, pages: list[tuple[str, dict]]) -> list[tuple[str, str]]:
    """(title, URL) of `pages` ((URL name, extra query): a node's or a verdict's evidence), for the same service and
    window."""
    return [(TITLES[name], f"{reverse(name)}?{f.query(**extra)}") for name, extra in pages]

