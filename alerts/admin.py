from django.contrib import admin

from alerts.models import AlertRule, AlertState, Delivery, Webhook


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "kind", "enabled", "created_at")
    list_filter = ("kind", "enabled")


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "webhook", "event", "status", "attempts", "last_status_code", "sent_at",
                    "next_attempt_at", "uuid")
    list_filter = ("status", "event")
    search_fields = ("uuid",)  # find the delivery a receiver reports by its X-LatencyObs-Delivery id
    readonly_fields = [f.name for f in Delivery._meta.fields]


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "service", "kind", "group_by", "threshold", "for_seconds", "enabled")
    list_filter = ("kind", "enabled")
    filter_horizontal = ("webhooks",)


@admin.register(AlertState)
class AlertStateAdmin(admin.ModelAdmin):
    list_display = ("rule", "group_key", "state", "since", "last_value", "last_notified_at")
    list_filter = ("state",)
