from django.contrib import admin

from analysis.models import (DirtyHour, JudgeWork, PendingDiagnosis, RetiredIncident, ServiceCost, UnaggregatedHour,
                             WindowDiagnosis)


@admin.register(ServiceCost)
class ServiceCostAdmin(admin.ModelAdmin):
    list_display = ("project", "service", "cost_per_hour_usd")
    list_filter = ("project",)


@admin.register(WindowDiagnosis)
class WindowDiagnosisAdmin(admin.ModelAdmin):
    list_display = ("project", "service", "start", "end", "verdict", "computed_at")
    list_filter = ("project", "verdict")
    readonly_fields = ("result",)


# the minute jobs' backlog (analysis/work/backlog.py): what waits, per project, and since when
@admin.register(DirtyHour)
class DirtyHourAdmin(admin.ModelAdmin):
    list_display = ("project", "hour", "queued_at")
    list_filter = ("project",)


@admin.register(JudgeWork)
class JudgeWorkAdmin(admin.ModelAdmin):
    list_display = ("project", "service", "start", "end", "queued_at", "failures")
    list_filter = ("project",)
    search_fields = ("service",)


@admin.register(RetiredIncident)
class RetiredIncidentAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "service", "reason", "merged_into", "retired_at")
    list_filter = ("project", "reason")


@admin.register(UnaggregatedHour)
class UnaggregatedHourAdmin(admin.ModelAdmin):
    list_display = ("project", "hour")
    list_filter = ("project",)


@admin.register(PendingDiagnosis)
class PendingDiagnosisAdmin(admin.ModelAdmin):
    list_display = ("project", "service", "queued_at", "seen_at")
    list_filter = ("project",)
    search_fields = ("service",)
