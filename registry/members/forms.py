from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.models import User

from registry.models import SLUG_PATTERN, Membership, Practice

ROLE_HELP = "Staff manage the API key and the members; reviewers see them and review duplicates."


class InviteForm(forms.Form):
    email = forms.EmailField(
        label="Email address",
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "off"}),
        help_text="The invitation goes to this address; its link works once.",
    )
    role = forms.ChoiceField(
        label="Role",
        choices=Membership.Role.choices,
        initial=Membership.Role.STAFF,
        help_text=ROLE_HELP,
    )


class RoleForm(forms.Form):
    role = forms.ChoiceField(label="Role", choices=Membership.Role.choices)


class PracticeNewForm(forms.Form):
    name = forms.CharField(label="Name", max_length=200, help_text="As people read it.")
    slug = forms.RegexField(
        label="Code",
        regex=SLUG_PATTERN,
        max_length=50,
        help_text="Lowercase letters and digits, joined by single hyphens, e.g. st-mary.",
        error_messages={"invalid": "Use lowercase letters and digits, joined by single hyphens."},
    )
    kind = forms.ChoiceField(
        label="Kind",
        choices=[
            ("real", "Real: its records count in the registry"),
            ("sandbox", "Sandbox: for trying the API"),
        ],
        initial="real",
        widget=forms.RadioSelect,
    )
    email = forms.EmailField(
        label="First staff member's email address",
        max_length=254,
        help_text="They are invited as staff, and invite their colleagues.",
    )

    def clean_slug(self) -> str:
        slug: str = self.cleaned_data["slug"]
        if Practice.objects.filter(slug=slug).exists():
            raise forms.ValidationError("A practice with this code already exists.")
        return slug


class AcceptForm(forms.Form):
    """A new account's name and password (Django's password validators apply)."""

    first_name = forms.CharField(label="First name", max_length=150)
    last_name = forms.CharField(label="Last name", max_length=150)
    password1 = forms.CharField(
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=password_validation.password_validators_help_text_html(),
    )
    password2 = forms.CharField(
        label="Password again",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args: Any, email: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.email = email

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        first, second = cleaned.get("password1"), cleaned.get("password2")
        if first and second and first != second:
            self.add_error("password2", "The two passwords differ.")
        elif first:
            try:
                password_validation.validate_password(first, self._account(cleaned))
            except forms.ValidationError as error:
                self.add_error("password1", error)
        return cleaned

    def _account(self, cleaned: dict[str, Any]) -> User:
        """The account as it will be, for the validator that refuses a password like the name."""
        names = {key: cleaned.get(key, "") for key in ("first_name", "last_name")}
        return User(username=self.email, email=self.email, **names)
