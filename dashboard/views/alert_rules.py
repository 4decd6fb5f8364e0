"""Alert rules: list the project's rules with where each stands, create one, edit one (?edit=ID), mute or unmute it,
delete it, send a test notification to its webhooks. The project comes from ?project= on GET and POST alike, so
`page` checks membership for both; a rule id of another project answers 404."""
from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from alerts import delivery
from alerts.models import AlertRule
from dashboard.access import page
from dashboard.alert_forms import AlertRuleForm
from dashboard.budget_forms import PickForm

ACTIONS = ("mute", "unmute", "delete", "test")


@require_http_methods(["GET", "POST"])
@page(needs_service=False)
def alert_rules(request, page):
    editing = _rule(page, request.GET.get("edit") or request.POST.get("edit"))
    form = AlertRuleForm(page.project, instance=editing or AlertRule(service=page.filters.service))
    if request.method == "POST":
        if request.POST.get("action") in ACTIONS:
            return act(request, page, request.POST["action"])
        form = AlertRuleForm(page.project, request.POST, instance=editing or AlertRule())
        if form.is_valid():
            rule = form.save()
            messages.success(request, f"Alert rule {rule.name} {'saved' if editing else 'created'}.")
            return redirect(reverse("alert-rules") + page.project_query)
    rules = page.project.alert_rules.order_by("service", "name").prefetch_related("webhooks", "states")
    return page.render("dashboard/alert_rules.html", {
        "form": form, "editing": editing, "post_to": page.project_query, "rules": rules})


def act(request, page, action: str):
    """mute / unmute / delete / test one rule of the page's project, then back to the list."""
    pick = PickForm(request.POST)
    if not pick.is_valid():
        raise Http404("no such alert rule")
    rule = get_object_or_404(AlertRule, pk=pick.cleaned_data["id"], project=page.project)
    if action == "delete":
        rule.delete()
        messages.success(request, f"Alert rule {rule.name} deleted.")
    elif action == "test":
        link = request.build_absolute_uri(reverse("alert-rules") + page.project_query)
        sent = [delivery.send_test(hook, link) for hook in rule.webhooks.all()]
        messages.success(request, f"Test notification queued for {len(sent)} webhook(s) of {rule.name}: see "
                                  f"Webhooks for the delivery log." if sent else f"{rule.name} has no webhook.")
    else:
        rule.enabled = action == "unmute"
        rule.save(update_fields=["enabled"])
        messages.success(request, f"Alert rule {rule.name} {action}d.")
    return redirect(reverse("alert-rules") + page.project_query)


def _rule(page, raw: str | None) -> AlertRule | None:
    if not raw:
        return None
    if not raw.isdigit():
        raise Http404("no such alert rule")
    return get_object_or_404(AlertRule, pk=int(raw), project=page.project)
