from django.contrib import admin

from slos.models import Slo


@admin.register(Slo)
class SloAdmin(admin.ModelAdmin):
    list_display = ("project", "service", "route", "tenant", "signal", "threshold_ms", "objective", "window_days")
    list_filter = ("project", "signal", "window_days")
