from django.contrib import admin

from projects.models import ApiKey, Project


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "ingest_spans_per_second", "ingest_spool_share", "created_at")
    filter_horizontal = ("members",)
    fieldsets = (
        (None, {"fields": ("name", "members", "created_at")}),
        ("Ingest limits (blank = the default from the settings)",
         {"fields": ("ingest_spans_per_second", "ingest_spool_share")}),
        ("Cardinality limits per hour (blank = the default from the settings; past them: __other__)",
         {"fields": ("ingest_max_services_per_hour", "ingest_max_routes_per_hour",
                     "ingest_max_tenants_per_hour", "ingest_max_instances_per_hour")}),
    )


@admin.action(description="Revoke selected keys")
def revoke_keys(modeladmin, request, queryset):
    for key in queryset.filter(revoked_at__isnull=True):
        key.revoke()


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("prefix", "project", "name", "scopes", "created_at", "revoked_at")
    list_filter = ("project",)
    readonly_fields = ("prefix", "key_hash", "created_at")
    actions = [revoke_keys]

    def has_add_permission(self, request):
        return False  # keys are issued by create_api_key (or the dashboard), which shows them once
