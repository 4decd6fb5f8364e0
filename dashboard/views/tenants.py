"""Placeholder until the page lands."""
from dashboard.access import page


@page
def tenants(request, page):
    return page.render("dashboard/overview.html", {"charts": []})
