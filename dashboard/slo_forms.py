"""The SLOs page's forms: a new SLO (its scope and promise) and the edit of one (the promise only: service, route and
tenant stay, as a budget's do). A promise the project already has is refused with a message."""
from django import forms

from slos.models import Slo

PROMISE = ["signal", "threshold_ms", "objective", "window_days"]
SCOPE_HELP = {"route": "blank = all routes", "tenant": "blank = all tenants"}


def duplicate_error(slo: Slo) -> str:
    return f"{slo.project.name} already has this SLO: {slo.description}."


class PromiseForm(forms.ModelForm):
    """What an SLO promises; is_valid() runs the model's validators (objective between 0.5 and 0.99999, a threshold
    above 0, a window of 7, 28 or 30 days) and refuses a promise the project already has."""

    class Meta:
        model = Slo
        fields = PROMISE
        labels = {"threshold_ms": "Threshold (ms)", "objective": "Objective (share of good requests)",
                  "window_days": "Rolling window"}
        widgets = {"threshold_ms": forms.NumberInput(attrs={"step": "any", "size": 8}),
                   "objective": forms.NumberInput(attrs={"step": "any", "size": 8, "placeholder": "0.99"})}

    def clean(self):
        data = super().clean()
        rivals = Slo.objects.filter(project=self.instance.project, service=self.instance.service,
                                    route=self.instance.route, tenant=self.instance.tenant,
                                    **{k: data.get(k) for k in PROMISE}).exclude(pk=self.instance.pk)
        if rivals.exists():
            raise forms.ValidationError(duplicate_error(rivals.first()), code="duplicate")
        return data


class NewSloForm(PromiseForm):
    class Meta(PromiseForm.Meta):
        fields = ["service", "route", "tenant", *PROMISE]
        help_texts = SCOPE_HELP

    def __init__(self, project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.project = project

    def clean(self):
        # the scope is on the instance before PromiseForm looks for the same promise
        for name in ("service", "route", "tenant"):
            if name in self.cleaned_data:
                setattr(self.instance, name, self.cleaned_data[name])
        return super().clean()
