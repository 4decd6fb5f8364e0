"""Reviews: the project's stored weekly latency reviews (reports/), one page each, downloadable as one HTML file.

The reviews are built and stored by reports (send_weekly_review, the hourly task); these pages only show them.
"""
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from dashboard import review_charts
from dashboard.access import page
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
        response = HttpResponse(review_charts.standalone(found), content_type="text/html; charset=utf-8")
        filename = f"latency-review-{found.project.name}-{found.week}.html"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    return page.render("reports/review.html", review_charts.context(found))
