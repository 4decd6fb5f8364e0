"""Placeholder until the page lands."""
from dashboard.access import page


@page
def runs(request, page):
    return page.render("dashboard/overview.html", {"charts": []})
@page
def run(request, page, run_id):
    return page.render('dashboard/overview.html', {'charts': []})
