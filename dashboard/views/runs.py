"""Runs: search by run id / trace id / tenant or list the slowest runs of the window; one run's waterfall."""
from django.views.decorators.http import require_GET

from analysis.buckets import PARTS
from analysis.panels import runs as numbers
from analysis.scope import Scope
from dashboard import charts, waterfall
from dashboard.access import page


def list_options(params) -> dict:
    """The list's own URL parameters, unknown values dropped: q, sort (total|ttft|recent; 'slowest' = total),
    bucket (orders by that bucket instead), status (error|ok), retried (1)."""
    sort = params.get("sort", "")
    bucket = params.get("bucket", "")
    return {"q": params.get("q", "").strip(),
            "sort": sort if sort in numbers.SORTS else "total",
            "bucket": bucket if bucket in PARTS else "",
            "status": params.get("status", "") if params.get("status") in ("error", "ok") else "",
            "retried": "1" if params.get("retried") == "1" else ""}


@require_GET
@page
def runs(request, page):
    f, opts = page.filters, list_options(request.GET)
    found = page.kept(numbers.build, q=opts["q"], sort=opts["bucket"] or opts["sort"], status=opts["status"],
                       retried=bool(opts["retried"]))
    wider = None if found.wider is None else f.query(range="", start=found.wider[0], end=found.wider[1], service="",
                                                     q=opts["q"])
    # TRICKY: the URL pattern (<path:run_id>) opens a pasted run id with "/", but a link to one is not safe: browsers
    # resolve "." and ".." segments (escaped or not), so a hostile id could lead elsewhere. Such a run is listed
    # without a link.
    rows = [{**r, "link": f.query(service=r["service"]) if "/" not in r["run_id"] else None} for r in found.runs]
    return page.render("dashboard/runs.html", {
        "runs": rows, "opts": opts, "wider": wider, "wider_covered": found.wider_covered, "choices": choices(f, opts)})


def choices(f, opts) -> dict:
    """Links that change one list option and keep the rest: [(label, query string, active)] per option."""
    def link(**changes):
        return f.query(**{**opts, **changes})
    return {
        "order": [(s, link(sort=s, bucket=""), not opts["bucket"] and opts["sort"] == s) for s in numbers.SORTS]
                 + [(b, link(bucket=b), opts["bucket"] == b) for b in PARTS],
        "status": [(label, link(status=v), opts["status"] == v) for label, v in
                   (("any", ""), ("failed", "error"), ("succeeded", "ok"))],
        "retried": [("any", link(retried=""), not opts["retried"]),
                    ("retried only", link(retried="1"), bool(opts["retried"]))],
    }


@require_GET
@page(needs_service=False)
def run(request, page, run_id):
    f = page.filters
    # the run's own service only when the link says so; a pasted URL finds the run in any service
    service = request.GET.get("service", "")
    found = numbers.of(Scope(page.project.pk, service, f.start, f.end), run_id)
    if found is None:
        return page.render("dashboard/run.html", {
            "run_id": run_id, "missing": True,
            "wider": f.query(range="", start=f.end - numbers.WIDER, end=f.end, service=service)}, status=404)
    laid = waterfall.layout(found.attempts, found.spans, found.below)
    return page.render("dashboard/run.html", {
        "run_id": run_id, "summary": found.summary, "attempts": laid["attempts"], "spans": laid["spans"],
        "truncated": found.truncated,
        "chart": ("waterfall", charts.waterfall(laid["rows"], "Attempts, their bucket split and spans")),
    })
