"""Who may do what in a practice: rules the settings pages and the sandbox share."""

from __future__ import annotations

from registry.models import Membership


def may_manage_key(membership: Membership) -> bool:
    """Staff of the practice (and superusers) mint, rotate and revoke its API key."""
    return membership.role == Membership.Role.STAFF or membership.user.is_superuser
