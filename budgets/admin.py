from django.contrib import admin

from budgets.models import Budget, BudgetViolation, StageTarget


class StageTargetInline(admin.TabularInline):
    model = StageTarget
    extra = 0


@admin.register(Budget)
class BudgetAdmin(admin.ModelAdmin):
    list_display = ("project", "service", "route", "percentile", "total_ms", "name")
    list_filter = ("project",)
    inlines = [StageTargetInline]


@admin.register(BudgetViolation)
class BudgetViolationAdmin(admin.ModelAdmin):
    list_display = ("budget", "start", "end", "stage", "measured_ms", "target_ms", "over_ms", "requests")
    list_filter = ("stage",)
