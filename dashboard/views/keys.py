"""Keys: list a project's API keys, create one (its raw value is shown once, in the POST response), revoke one.

Any member of the project may manage its keys. The project comes from ?project= on GET and POST alike, so
`page` checks membership for both; a key id of another project answers 404.
"""
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from dashboard.access import page
from dashboard.forms import CreateKeyForm, RevokeKeyForm
from projects.keys import CACHE_SECONDS
from projects.models import ApiKey


@never_cache  # the POST response holds a raw key: no browser or proxy may keep it
@require_http_methods(["GET", "POST"])
@page(needs_service=False)
def keys(request, page):
    form, created = CreateKeyForm(), None
    if request.method == "POST":
        if request.POST.get("action") == "revoke":
            return revoke(request, page)
        form = CreateKeyForm(request.POST)
        if form.is_valid():
            key, raw = ApiKey.issue(page.project, form.cleaned_data["scopes"], form.cleaned_data["name"])
            created, form = {"key": key, "raw": raw}, CreateKeyForm()
    return page.render("dashboard/keys.html", {
        "form": form, "created": created, "cache_seconds": int(CACHE_SECONDS),
        "keys": page.project.api_keys.order_by("-created_at", "-pk"),
        "otlp_url": request.build_absolute_uri(reverse("otlp-traces")),
        "post_to": page.project_query,  # forms post back to the same project
    })


def revoke(request, page):
    form = RevokeKeyForm(request.POST)
    if not form.is_valid():
        raise Http404("no such key")
    key = get_object_or_404(ApiKey, pk=form.cleaned_data["key"], project=page.project)
    if key.is_active:  # revoking twice keeps the first date
        key.revoke()
    # Post/Redirect/Get: a reload of the list must not post the revocation again.
    return redirect(reverse("keys") + page.project_query)
