"""The admin's side of the members room: changes made there are recorded as on the web, and
the record of changes and the invitations are listed read-only (superusers)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest

from registry.members.services import event_record
from registry.models import Invitation, Membership, MembershipEvent

Action = MembershipEvent.Action


def _by(request: HttpRequest) -> User | None:
    return request.user if isinstance(request.user, User) else None


def membership_recorded(request: HttpRequest, membership: Membership, *, added: bool) -> None:
    action = Action.ADDED if added else Action.ROLE_CHANGED
    event_record(
        practice=membership.practice,
        action=action,
        subject=membership.user.get_username(),
        role=membership.role,
        by=_by(request),
    )


def removal_recorded(request: HttpRequest, membership: Membership) -> None:
    subject = membership.user.get_username()
    practice = membership.practice
    event_record(practice=practice, action=Action.REMOVED, subject=subject, by=_by(request))


class MembershipChangesRecorded:
    """For the Membership admin: each add, change of role and removal is a MembershipEvent."""

    def save_model(
        self, request: HttpRequest, obj: Membership, form: ModelForm, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)  # type: ignore[misc]
        if not change or "role" in form.changed_data or "practice" in form.changed_data:
            membership_recorded(request, obj, added=not change)

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        removal_recorded(request, obj)
        super().delete_model(request, obj)  # type: ignore[misc]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Membership]) -> None:
        for membership in queryset.select_related("user", "practice"):
            removal_recorded(request, membership)
        super().delete_queryset(request, queryset)  # type: ignore[misc]


class InlineMembershipChangesRecorded:
    """For an admin with a Membership inline (the practice's): the same, for the inline."""

    def save_formset(
        self, request: HttpRequest, form: ModelForm, formset: BaseInlineFormSet, change: bool
    ) -> None:
        if formset.model is not Membership:
            super().save_formset(request, form, formset, change)  # type: ignore[misc]
            return
        removed = [f.instance for f in formset.deleted_forms if f.instance.pk is not None]
        for membership in removed:
            removal_recorded(request, membership)
        super().save_formset(request, form, formset, change)  # type: ignore[misc]
        for membership in formset.new_objects:
            membership_recorded(request, membership, added=True)
        for membership, changed in formset.changed_objects:
            if "role" in changed:
                membership_recorded(request, membership, added=False)


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(MembershipEvent)
class MembershipEventAdmin(ReadOnly):
    list_display = ["at", "practice", "action", "subject", "role", "by_username"]
    list_filter = ["action"]
    list_select_related = ["practice"]
    search_fields = ["subject", "by_username", "practice__slug"]


@admin.register(Invitation)
class InvitationAdmin(ReadOnly):
    """Who was invited where, by whom, and what became of it; never a link."""

    list_display = ["email", "practice", "role", "created_at", "expires_at", "accepted_at"]
    list_filter = ["role"]
    list_select_related = ["practice"]
    search_fields = ["email", "practice__slug"]
    exclude = ["token_digest"]
