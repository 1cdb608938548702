"""The registry's admin: practices, accounts and memberships.

The duplicate review's admin is a room of its own (registry/review/admin.py), registered
from here; the keys app extends the practice admin with its keys (keys/admin.py).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from registry.admin_filters import PracticeFilter
from registry.members.admin import InlineMembershipChangesRecorded, MembershipChangesRecorded
from registry.models import Membership, Practice

# Django's autodiscovery imports this module only: importing the review's admin registers it.
from registry.review import admin as review_admin  # noqa: F401
from registry.services import practice_set_sandbox, sandbox_change_problem


class MembershipInline(admin.StackedInline):
    """Stacked: each field keeps its label (a tabular row's inputs have none of their own)."""

    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class PracticeForm(forms.ModelForm):
    class Meta:
        model = Practice
        fields = ["slug", "name", "sandbox"]

    def clean_sandbox(self) -> bool:
        """A practice changes kind only while it holds nothing (registry.services)."""
        sandbox = bool(self.cleaned_data["sandbox"])
        stored = self.instance
        if stored.pk is not None and sandbox != stored.sandbox:
            problem = sandbox_change_problem(stored)
            if problem:
                raise forms.ValidationError(problem)
        return sandbox


@admin.register(Practice)
class PracticeAdmin(InlineMembershipChangesRecorded, admin.ModelAdmin):
    """Practices and their members. The keys app adds its inlines and actions (keys/admin.py),
    so this app knows nothing of keys."""

    form = PracticeForm
    list_display = ["slug", "name", "sandbox", "created_at"]
    list_filter = ["sandbox"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]

    def save_model(self, request: HttpRequest, obj: Practice, form: Any, change: bool) -> None:
        """A change of kind goes through the service, which checks again under the lock."""
        wanted = obj.sandbox
        if not change or "sandbox" not in form.changed_data:
            super().save_model(request, obj, form, change)
            return
        obj.sandbox = not wanted
        super().save_model(request, obj, form, change)
        try:
            practice_set_sandbox(practice=obj, sandbox=wanted)
        except ValidationError as error:
            self.message_user(request, error.messages[0], messages.ERROR)


class AccountChangeForm(UserChangeForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Django names a hint for the password's read-only widget that its fieldset template
        # never writes (the widget has no id for a label): the widget says it all itself.
        self.fields["password"].help_text = ""


class AccountAdmin(UserAdmin):
    """Django's user admin, with sign-in moments shown rather than edited, groups and
    permissions as plain lists (the two-pane widget's icons carry ARIA their role forbids),
    and every hint it names on the page."""

    form = AccountChangeForm
    readonly_fields = ["last_login", "date_joined"]
    filter_horizontal = ()


admin.site.unregister(User)
admin.site.register(User, AccountAdmin)


@admin.register(Membership)
class MembershipAdmin(MembershipChangesRecorded, admin.ModelAdmin):
    list_display = ["user", "practice_label", "role", "created_at"]
    list_filter = ["role", PracticeFilter]
    list_select_related = ["user", "practice"]
    search_fields = ["user__username", "practice__slug"]
    autocomplete_fields = ["user", "practice"]

    @admin.display(description="practice", ordering="practice__name")
    def practice_label(self, membership: Membership) -> str:
        return membership.practice.label
