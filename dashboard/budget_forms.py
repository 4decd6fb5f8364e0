"""Forms of the Budgets and Webhooks pages. A budget's stage targets are fixed fields, one per budgets.stages.STAGES
entry (blank = no target for that stage), so the form always offers every stage the evaluation knows."""
from django import forms
from django.db import transaction

from alerts.models import Webhook
from budgets.models import Budget, StageTarget
from budgets.presets import PRESETS
from budgets.stages import PERCENTILES, STAGES

ROUTE_HELP = "blank = all routes"


def duplicate_error(service: str, route: str) -> str:
    where = f"route {route}" if route else "all routes"
    return f"{service} already has a budget for {where}: edit that one instead."


class TargetsForm(forms.Form):
    """Percentile, total and stage targets: what the edit form changes (service and route stay)."""

    percentile = forms.TypedChoiceField(choices=[(p, f"p{p}") for p in PERCENTILES], coerce=int, initial=95)
    total_ms = forms.FloatField(min_value=0, label="Total (ms)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for code, label in STAGES.items():
            self.fields[f"stage_{code}"] = forms.FloatField(min_value=0, required=False, label=label,
                                                            widget=forms.NumberInput(attrs={"step": "any", "size": 7}))

    def stage_fields(self):
        return [self[f"stage_{code}"] for code in STAGES]

    @classmethod
    def initial_for(cls, budget: Budget) -> dict:
        targets = {t.stage: t.target_ms for t in budget.stages.all()}
        return {"percentile": budget.percentile, "total_ms": budget.total_ms,
                **{f"stage_{code}": targets.get(code) for code in STAGES}}

    def targets(self) -> dict[str, float]:
        return {code: self.cleaned_data[f"stage_{code}"] for code in STAGES
                if self.cleaned_data.get(f"stage_{code}") is not None}

    def save(self, budget: Budget) -> Budget:
        """Write percentile, total and the stage targets (replacing the old ones) in one transaction."""
        with transaction.atomic():
            budget.percentile, budget.total_ms = self.cleaned_data["percentile"], self.cleaned_data["total_ms"]
            budget.save()
            budget.stages.all().delete()
            StageTarget.objects.bulk_create(StageTarget(budget=budget, stage=s, target_ms=ms)
                                            for s, ms in self.targets().items())
        return budget


class WhereMixin:
    """service + route of a new budget, refused when the project already has a budget there."""

    def clean(self):
        data = super().clean()
        service, route = data.get("service"), data.get("route", "")
        if service and Budget.objects.filter(project=self.project, service=service, route=route).exists():
            raise forms.ValidationError(duplicate_error(service, route), code="duplicate")
        return data


class CustomBudgetForm(WhereMixin, TargetsForm):
    service = forms.CharField(max_length=256)
    route = forms.CharField(max_length=256, required=False, help_text=ROUTE_HELP)
    field_order = ["service", "route", "percentile", "total_ms"]

    def __init__(self, project, *args, **kwargs):
        self.project = project
        super().__init__(*args, **kwargs)

    def create(self) -> Budget:
        budget = Budget(project=self.project, service=self.cleaned_data["service"], route=self.cleaned_data["route"])
        return self.save(budget)


class PresetBudgetForm(WhereMixin, forms.Form):
    service = forms.CharField(max_length=256)
    route = forms.CharField(max_length=256, required=False, help_text=ROUTE_HELP)
    preset = forms.ChoiceField(choices=[(name, name) for name in PRESETS], initial=next(iter(PRESETS)))

    def __init__(self, project, *args, **kwargs):
        self.project = project
        super().__init__(*args, **kwargs)

    def create(self) -> Budget:
        d = self.cleaned_data
        return Budget.from_preset(self.project, d["service"], d["route"], d["preset"])


class PickForm(forms.Form):
    """The id of the budget or webhook a button acts on (looked up within the page's project)."""

    id = forms.IntegerField(min_value=1)


class WebhookForm(forms.ModelForm):
    """is_valid() runs the model's full_clean, so the URL goes through alerts.validation.validate_webhook_url."""

    class Meta:
        model = Webhook
        fields = ["name", "kind", "url"]
        labels = {"url": "URL"}
        widgets = {"url": forms.URLInput(attrs={"size": 50, "placeholder": "https://hooks.slack.com/services/…"}),
                   "kind": forms.RadioSelect}
