from django.contrib import admin

from reports.models import ReviewSchedule, WeeklyReview

admin.site.register(ReviewSchedule)
admin.site.register(WeeklyReview, list_display=("project", "week", "start", "created_at"))
