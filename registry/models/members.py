"""Invitations and the record of membership changes (registry/members/ is their room)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from registry.models.core import Membership, Practice


class Invitation(models.Model):
    """A link, sent by mail, that makes its holder a member of a practice once.

    Only the SHA-256 digest of the link's token is stored, so the table cannot give a link
    away. ``practice`` is empty for the invitation that lets a new registry-office account set
    its password (``manage.py grantregistryoffice``). The link works while the invitation is
    pending: not accepted, not cancelled, not expired.
    """

    practice = models.ForeignKey(
        Practice, null=True, blank=True, on_delete=models.CASCADE, related_name="invitations"
    )
    email = models.EmailField()
    role = models.CharField(max_length=20, choices=Membership.Role.choices, blank=True)
    token_digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    cancelled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["practice", "email"],
                condition=models.Q(accepted_at__isnull=True, cancelled_at__isnull=True),
                name="invitation_pending",
            )
        ]

    def __str__(self) -> str:
        return f"Invitation to {self.practice or 'the registry'} ({self.role or 'account'})"

    @property
    def is_pending(self) -> bool:
        """Whether the link still works: neither used nor cancelled, and not yet expired."""
        open_ = self.accepted_at is None and self.cancelled_at is None
        return open_ and self.expires_at > timezone.now()


class MembershipEvent(models.Model):
    """One change to who belongs where, by whom and when; written with the change itself.

    The people are kept as text too (``by_username``, ``subject``: a username or, for an
    invitation, the invited address), so the record still reads after an account is deleted.
    ``practice`` is empty for a grant of the registry-office role.
    """

    class Action(models.TextChoices):
        ADDED = "added", "Added"
        INVITED = "invited", "Invited"
        INVITATION_RESENT = "invitation_resent", "Invitation sent again"
        INVITATION_CANCELLED = "invitation_cancelled", "Invitation cancelled"
        JOINED = "joined", "Joined"
        ROLE_CHANGED = "role_changed", "Role changed"
        REMOVED = "removed", "Removed"
        PRACTICE_ADDED = "practice_added", "Practice added"
        OFFICE_GRANTED = "office_granted", "Registry office granted"

    practice = models.ForeignKey(
        Practice, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    action = models.CharField(max_length=30, choices=Action.choices)
    subject = models.CharField(max_length=254, blank=True)
    role = models.CharField(max_length=20, blank=True, help_text="The role after the change.")
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    by_username = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["practice", "-at"], name="membership_event_at")]

    def __str__(self) -> str:
        return f"{self.get_action_display()}: {self.subject} by {self.by_username or 'a command'}"
