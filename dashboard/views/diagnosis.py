"""Placeholder until the page lands."""
from dashboard.access import page


@page
def diagnosis(request, page):
    return page.render("dashboard/overview.html", {"charts": []})
