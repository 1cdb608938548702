"""Writes to practices and memberships."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from registry.models import Membership, Practice, Record, slug_validator


def practice_create(
    *, slug: str, name: str = "", sandbox: bool | None = None
) -> tuple[Practice, bool]:
    """Create the practice, or return the existing one: running it twice is harmless.

    ``sandbox`` None creates a live practice and leaves an existing one as it is; True or
    False for an existing practice goes through :func:`practice_set_sandbox`, and is refused
    as it refuses.
    """
    slug_check(slug)
    practice, created = Practice.objects.get_or_create(
        slug=slug, defaults={"name": name or slug, "sandbox": bool(sandbox)}
    )
    if not created and name and practice.name != name:
        practice.name = name
        practice.save(update_fields=["name"])
    if not created and sandbox is not None and practice.sandbox != sandbox:
        practice_set_sandbox(practice=practice, sandbox=sandbox)
    return practice, created


def slug_check(slug: str) -> None:
    """Raise ``ValidationError`` for a slug a practice may not have."""
    slug_validator(slug)
    if len(slug) > Practice._meta.get_field("slug").max_length:  # type: ignore[operator]
        raise ValidationError("A practice slug is at most 50 characters.")


def practice_set_sandbox(*, practice: Practice, sandbox: bool) -> None:
    """Make the practice a sandbox, or a live practice: only while it holds nothing.

    Refused (``ValidationError``, saying why) while the practice has an active key, any
    record or any ingestion. So a key's kind (``rgk_`` or ``rgk_test_``) always fits its
    practice, test data never starts counting in the registry, and real data never becomes
    something a sandbox reset deletes. The practice row is locked, as minting a key locks it.
    """
    with transaction.atomic():
        locked = Practice.objects.select_for_update().get(pk=practice.pk)
        if locked.sandbox != sandbox:
            problem = sandbox_change_problem(locked)
            if problem:
                raise ValidationError(problem)
            locked.sandbox = sandbox
            locked.save(update_fields=["sandbox"])
    practice.sandbox = sandbox


def sandbox_change_problem(practice: Practice) -> str | None:
    """Why ``practice`` may not be switched to or from sandbox now, or None if it may.

    The key and ingestion tables are read through their relations to the practice
    (``api_keys``, ``ingestions``), so this app imports neither.
    """
    which = "a live practice" if practice.sandbox else "a sandbox"
    held = []
    if practice.api_keys.filter(revoked_at__isnull=True).exists():
        held.append("an active API key (revoke it first)")
    if Record.objects.filter(practice=practice).exists():
        held.append("records")
    if practice.ingestions.exists():
        held.append("ingestions")
    if not held:
        return None
    reset = " A sandbox's records and ingestions go with its reset." if practice.sandbox else ""
    return (
        f"{practice.slug} cannot become {which} while it has {' and '.join(held)}: only a "
        f"practice that holds nothing changes kind.{reset}"
    )


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
