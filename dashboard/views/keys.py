"""Placeholder until the page lands."""
from dashboard.access import page


@page
def keys(request, page):
    return page.render("dashboard/overview.html", {"charts": []})
