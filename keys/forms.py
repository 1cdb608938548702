from __future__ import annotations

from django import forms

from keys.models import PREFIX_LENGTH, SCOPE_CHOICES, SCOPES


class MintForm(forms.Form):
    scopes = forms.MultipleChoiceField(
        label="Scopes",
        choices=SCOPE_CHOICES,
        initial=list(SCOPES),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one scope."},
        help_text="What integrations using this key may do.",
    )


class RotateForm(MintForm):
    # The key the person confirmed; if it changed meanwhile, nothing happens.
    key = forms.CharField(widget=forms.HiddenInput, max_length=PREFIX_LENGTH)


class RevokeForm(forms.Form):
    key = forms.CharField(widget=forms.HiddenInput, max_length=PREFIX_LENGTH)
