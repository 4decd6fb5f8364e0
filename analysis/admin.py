from django.contrib import admin

from analysis.models import ServiceCost, WindowDiagnosis


@admin.register(ServiceCost)
class ServiceCostAdmin(admin.ModelAdmin):
    list_display = ("project", "service", "cost_per_hour_usd")
    list_filter = ("project",)


@admin.register(WindowDiagnosis)
class WindowDiagnosisAdmin(admin.ModelAdmin):
    list_display = ("project", "service", "start", "end", "verdict", "computed_at")
    list_filter = ("project", "verdict")
    readonly_fields = ("result",)
