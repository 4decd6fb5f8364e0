"""SLOs: list the project's SLOs with where each stands (compliance, error budget, burn rates, the burn-down chart)
over its rolling window ending at the filter bar's end (now by default); create one, edit its promise, delete it.
The project comes from ?project= on GET and POST alike, so `page` checks membership for both; an SLO id of another
project answers 404."""
from dataclasses import replace

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from analysis.panels import slos as numbers
from dashboard.access import page
from dashboard.budget_forms import PickForm
from dashboard.slo_charts import burn_down
from dashboard.slo_forms import NewSloForm, PromiseForm
from slos.models import Slo


@require_http_methods(["GET", "POST"])
@page(needs_service=False, ahead=())
def slos(request, page):
    new, edits = NewSloForm(page.project, initial={"service": page.filters.service}), {}
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            new = NewSloForm(page.project, request.POST)
            form = new
        elif action in ("edit", "delete"):
            slo = _slo(request, page)
            if action == "delete":
                slo.delete()
                messages.success(request, f"SLO {slo.description} deleted.")
                return redirect(reverse("slos") + page.project_query)
            form = edits[slo.pk] = PromiseForm(request.POST, instance=slo, prefix=f"s{slo.pk}")
        else:
            raise Http404("unknown action")
        if form.is_valid():
            messages.success(request, f"SLO {form.save().description} saved.")
            return redirect(reverse("slos") + page.project_query)
    return page.render("dashboard/slos.html", {"rows": _rows(page, edits), "new": new, "post_to": page.project_query})


def _slo(request, page) -> Slo:
    form = PickForm(request.POST)
    if not form.is_valid():
        raise Http404("no such SLO")
    return get_object_or_404(Slo, pk=form.cleaned_data["id"], project=page.project)


def _rows(page, edits: dict) -> list[dict]:
    """Per SLO: its numbers over the window ending at the filters' end (analysis/panels/slos.py), its burn-down chart
    and its edit form (bound after a failed edit)."""
    slos = page.project.slos.order_by("service", "route", "tenant", "signal", "pk")
    found = numbers.build(replace(page.scope, service="", route="", tenant=""), slos)
    return [{"slo": r.slo, "status": r.status, "not_measured": r.not_measured, "burn": r.burn,
             "chart": (f"slo-{r.slo.pk}-burn-down", burn_down(r.status, f"Error budget over {r.slo.window_days} days")),
             "form": edits.get(r.slo.pk) or PromiseForm(instance=r.slo, prefix=f"s{r.slo.pk}")} for r in found.rows]
