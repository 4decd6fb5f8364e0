from django.contrib import admin

from ingest.models import ScrapeTarget


@admin.register(ScrapeTarget)
class ScrapeTargetAdmin(admin.ModelAdmin):
    """Staff only (the admin site admits staff alone): a target is an internal address the server will fetch."""

    list_display = ("service", "instance", "url", "project", "interval_seconds", "enabled", "last_success_at",
                    "last_points", "last_error")
    list_filter = ("project", "enabled")
    readonly_fields = ("first_scraped_at", "last_scraped_at", "last_success_at", "last_error", "last_points",
                       "last_duration_ms")
