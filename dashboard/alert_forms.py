"""The Alert rules page's form: every field of alerts.models.AlertRule a member sets, its webhooks and budget limited to
the page's project. is_valid() runs the model's clean() (a kind measured per service, a tenant tail on ttft or total,
known verdicts, a budget or SLO of the rule's service)."""
from django import forms

from alerts.models import AlertRule


class AlertRuleForm(forms.ModelForm):
    class Meta:
        model = AlertRule
        fields = ["name", "kind", "service", "route", "group_by", "budget", "slo", "bucket", "percentile", "threshold",
                  "min_requests", "for_seconds", "renotify_seconds", "min_duration_minutes", "verdicts", "webhooks",
                  "enabled"]
        widgets = {"webhooks": forms.CheckboxSelectMultiple}

    def __init__(self, project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.project = project
        self.fields["webhooks"].queryset = project.webhooks.order_by("name", "pk")
        self.fields["budget"].queryset = project.budgets.order_by("service", "route")
        self.fields["slo"].queryset = project.slos.order_by("service", "route", "tenant", "signal")
