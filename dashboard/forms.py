"""Dashboard forms (Django forms: validation errors render on the form; CSRF comes from the middleware)."""
from django import forms

from projects.models import SCOPES


class CreateKeyForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, strip=True,
                           widget=forms.TextInput(attrs={"placeholder": "e.g. vllm-prod", "size": 24}))
    scopes = forms.MultipleChoiceField(
        choices=[(s, s) for s in SCOPES], initial=["ingest"], widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Pick at least one scope.",
                        "invalid_choice": "Unknown scope %(value)s: pick from " + ", ".join(SCOPES) + "."},
    )


class RevokeKeyForm(forms.Form):
    key = forms.IntegerField(min_value=1)
