"""Budgets: list the project's budgets with their recent violations; create one (from a preset or custom), edit
its targets, delete it. The project comes from ?project= on GET and POST alike, so `page` checks membership for
both; a budget id of another project answers 404."""
from django.contrib import messages
from django.db import IntegrityError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from budgets.models import Budget
from budgets.stages import STAGES, TOTAL
from dashboard.access import page
from dashboard.budget_forms import CustomBudgetForm, PickForm, PresetBudgetForm, TargetsForm, duplicate_error

RECENT_VIOLATIONS = 10
STAGE_LABELS = {TOTAL: "Total", **STAGES}


@require_http_methods(["GET", "POST"])
@page(needs_service=False)
def budgets(request, page):
    forms = {"preset": PresetBudgetForm(page.project, initial={"service": page.filters.service}),
             "custom": CustomBudgetForm(page.project, initial={"service": page.filters.service}),
             "edit": {}}
    if request.method == "POST":
        action = request.POST.get("action")
        if action in ("preset", "custom"):
            form = forms[action] = (PresetBudgetForm if action == "preset" else CustomBudgetForm)(page.project, request.POST)
            if _created(form):
                messages.success(request, f"Budget for {form.cleaned_data['service']} created.")
                return _back(page)
        elif action in ("edit", "delete"):
            budget = _budget(request, page)
            if action == "delete":
                budget.delete()
                messages.success(request, f"Budget for {budget.service} deleted.")
                return _back(page)
            form = forms["edit"][budget.pk] = TargetsForm(request.POST, prefix=f"b{budget.pk}")
            if form.is_valid():
                form.save(budget)
                messages.success(request, f"Budget for {budget.service} saved.")
                return _back(page)
        else:
            raise Http404("unknown action")
    return page.render("dashboard/budgets.html", {"rows": _rows(page.project, forms["edit"]), "forms": forms,
                                                  "post_to": page.project_query})


def _created(form) -> bool:
    if not form.is_valid():
        return False
    try:
        form.create()
    except IntegrityError:  # created meanwhile by someone else: the same message as the form's own check
        form.add_error(None, duplicate_error(form.cleaned_data["service"], form.cleaned_data["route"]))
        return False
    return True


def _budget(request, page) -> Budget:
    form = PickForm(request.POST)
    if not form.is_valid():
        raise Http404("no such budget")
    return get_object_or_404(Budget, pk=form.cleaned_data["id"], project=page.project)


def _rows(project, edit_forms: dict) -> list[dict]:
    """Per budget: its stage targets (labelled), its recent violations and its edit form (bound after a failed edit)."""
    rows = []
    for budget in project.budgets.prefetch_related("stages").order_by("service", "route"):
        targets = {t.stage: t.target_ms for t in budget.stages.all()}
        violations = list(budget.violations.order_by("-end", "stage")[:RECENT_VIOLATIONS])
        for v in violations:
            v.label = STAGE_LABELS.get(v.stage, v.stage)
        rows.append({
            "budget": budget, "violations": violations,
            "targets": [(code, STAGE_LABELS[code], targets[code]) for code in STAGES if code in targets],
            "form": edit_forms.get(budget.pk) or TargetsForm(initial=TargetsForm.initial_for(budget),
                                                             prefix=f"b{budget.pk}"),
        })
    return rows



def _back(page):
    # Post/Redirect/Get: a reload of the list must not post the change again.
    return redirect(reverse("budgets") + page.project_query)
