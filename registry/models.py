"""Practices, their members, and (issue 6) the masked records they own."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z"
slug_validator = RegexValidator(
    SLUG_PATTERN,
    "A practice slug is lowercase letters and digits, optionally joined by single hyphens.",
)


class Practice(models.Model):
    """A practice owns its API key, its records and its statistics; nothing crosses over."""

    slug = models.CharField(max_length=50, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    """A Django user's place in a practice. Staff manage the key; reviewers resolve duplicates."""

    class Role(models.TextChoices):
        STAFF = "staff", "Staff"
        REVIEWER = "reviewer", "Reviewer"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    practice = models.ForeignKey(Practice, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.STAFF)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "practice"], name="one_membership_per_practice")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.practice} ({self.role})"
