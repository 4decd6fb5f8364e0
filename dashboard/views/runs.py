"""Runs: search by run id / trace id / tenant or list the slowest runs of the window; one run's waterfall."""
from datetime import timedelta

from django.views.decorators.http import require_GET

from analysis.buckets import PARTS
from analysis.reads import runs as runs_
from dashboard import charts, waterfall
from dashboard.access import page

WIDER = timedelta(days=7)


def list_options(params) -> dict:
    """The list's own URL parameters, unknown values dropped: q, sort (total|ttft|recent; 'slowest' = total),
    bucket (orders by that bucket instead), status (error|ok), retried (1)."""
    sort = params.get("sort", "")
    bucket = params.get("bucket", "")
    return {"q": params.get("q", "").strip(),
            "sort": sort if sort in runs_.SORTS else "total",
            "bucket": bucket if bucket in PARTS else "",
            "status": params.get("status", "") if params.get("status") in ("error", "ok") else "",
            "retried": "1" if params.get("retried") == "1" else ""}


@require_GET
@page
def runs(request, page):
    f, opts = page.filters, list_options(request.GET)
    matched, wider = None, None
    if opts["q"]:
        # an id search looks in every service of the project: whoever pastes an id need not know its service
        matched = runs_.match(page.project.pk, f.start, f.end, opts["q"])
        if not matched:
            wider = f.query(range="", start=f.end - WIDER, end=f.end, service="", q=opts["q"])
    found = runs_.search(
        page.project.pk, f.start, f.end, service="" if opts["q"] else f.service, route=f.route, tenant=f.tenant,
        runs=matched, sort=opts["bucket"] or opts["sort"], status=opts["status"], retried=opts["retried"])
    for r in found:
        # TRICKY: the URL pattern (<path:run_id>) opens a pasted run id with "/", but a link to one is not
        # safe: browsers resolve "." and ".." segments (escaped or not), so a hostile id could lead elsewhere.
        # Such a run is listed without a link.
        r["link"] = f.query(service=r["service"]) if "/" not in r["run_id"] else None
    return page.render("dashboard/runs.html", {
        "runs": found, "opts": opts, "wider": wider, "wider_covered": f.end - f.start >= WIDER,
        "choices": choices(f, opts)})


def choices(f, opts) -> dict:
    """Links that change one list option and keep the rest: [(label, query string, active)] per option."""
    def link(**changes):
        return f.query(**{**opts, **changes})
    return {
        "order": [(s, link(sort=s, bucket=""), not opts["bucket"] and opts["sort"] == s) for s in runs_.SORTS]
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
    attempts = runs_.attempts(page.project.pk, run_id, f.start, f.end, service=service)
    if not attempts:
        return page.render("dashboard/run.html", {
            "run_id": run_id, "missing": True,
            "wider": f.query(range="", start=f.end - WIDER, end=f.end, service=service)}, status=404)
    end_ns = max(a["released_ns"] or a["start_ns"] for a in attempts)
    spans = runs_.spans(page.project.pk, [a["trace_id"] for a in attempts], attempts[0]["start_ns"], end_ns)
    attempts, below = runs_.layered(page.project.pk, attempts, spans)  # an engine's attempts under the calls
    laid = waterfall.layout(attempts, spans, below)
    return page.render("dashboard/run.html", {
        "run_id": run_id, "summary": runs_.summary(attempts), "attempts": laid["attempts"], "spans": laid["spans"],
        "truncated": len(spans) >= runs_.MAX_SPANS,
        "chart": ("waterfall", charts.waterfall(laid["rows"], "Attempts, their bucket split and spans")),
    })
