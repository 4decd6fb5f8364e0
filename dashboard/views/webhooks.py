"""Webhooks: list the project's webhooks, add one (a JSON webhook's signing secret is shown once, in the POST
response), enable/disable, delete, send a test notification; and the project's delivery log. The project comes
from ?project= on GET and POST alike, so `page` checks membership for both; a webhook id of another project
answers 404."""
from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from alerts import delivery
from alerts.models import Delivery, Webhook
from dashboard.access import page
from dashboard.budget_forms import PickForm, WebhookForm

LOG_SIZE = 50


@never_cache  # the POST response may hold a JSON webhook's secret
@require_http_methods(["GET", "POST"])
@page(needs_service=False)
def webhooks(request, page):
    form, created = WebhookForm(instance=Webhook(project=page.project)), None
    if request.method == "POST":
        action = request.POST.get("action")
        if action != "create":
            return act(request, page, action)
        form = WebhookForm(request.POST, instance=Webhook(project=page.project))
        if form.is_valid():
            created, form = form.save(), WebhookForm(instance=Webhook(project=page.project))
    return page.render("dashboard/webhooks.html", {
        "form": form, "created": created, "post_to": page.project_query,
        "hooks": page.project.webhooks.order_by("name", "pk"),
        "log": Delivery.objects.filter(webhook__project=page.project).select_related("webhook")[:LOG_SIZE],
        "log_size": LOG_SIZE,
    })


def act(request, page, action: str):
    """enable / disable / delete / test one webhook of the page's project, then back to the list."""
    pick = PickForm(request.POST)
    if action not in ("enable", "disable", "delete", "test") or not pick.is_valid():
        raise Http404("no such webhook or action")
    hook = get_object_or_404(Webhook, pk=pick.cleaned_data["id"], project=page.project)
    if action == "delete":
        hook.delete()
        messages.success(request, f"Webhook {hook.name} deleted.")
    elif action == "test":
        link = request.build_absolute_uri(reverse("diagnosis-page") + page.project_query)
        delivery.send_test(hook, link)
        messages.success(request, f"Test notification queued for {hook.name}: see the delivery log below.")
    else:
        hook.enabled = action == "enable"
        hook.save(update_fields=["enabled"])
        messages.success(request, f"Webhook {hook.name} {action}d.")
    return redirect(reverse("webhooks") + page.project_query)
