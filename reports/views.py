from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from dashboard.access import page
from reports import render
from reports.models import WeeklyReview


@require_GET
@page(needs_service=False)
def reviews(request, page):
    return page.render("reports/list.html", {"reviews": WeeklyReview.objects.filter(project=page.project)})


@require_GET
@page(needs_service=False)
def review(request, page, week):
    # only the page's project, which `page` has checked membership of: another project's week is a 404
    found = get_object_or_404(WeeklyReview, project=page.project, week=week)
    if request.GET.get("download"):
        response = HttpResponse(render.standalone(found), content_type="text/html; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="latency-review-{found.project.name}-{found.week}.html"'
        return response
    return page.render("reports/review.html", render.context(found))
