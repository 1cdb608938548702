"""Writes to practices and memberships."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from registry.models import Membership, Practice, slug_validator


def practice_create(*, slug: str, name: str = "") -> tuple[Practice, bool]:
    """Create the practice, or return the existing one: running it twice is harmless."""
    slug_validator(slug)
    if len(slug) > Practice._meta.get_field("slug").max_length:  # type: ignore[operator]
        raise ValidationError("A practice slug is at most 50 characters.")
    practice, created = Practice.objects.get_or_create(slug=slug, defaults={"name": name or slug})
    if not created and name and practice.name != name:
        practice.name = name
        practice.save(update_fields=["name"])
    return practice, created


def membership_add(
    *, practice: Practice, user: User, role: str = Membership.Role.STAFF
) -> tuple[Membership, bool]:
    if role not in Membership.Role.values:
        raise ValidationError(f"Unknown role; choose one of {', '.join(Membership.Role.values)}.")
    membership, created = Membership.objects.get_or_create(
        practice=practice, user=user, defaults={"role": role}
    )
    if not created and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership, created
