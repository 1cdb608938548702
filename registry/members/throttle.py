"""Invitation throttles, counted in the shared cache: per practice and per inviter.

Past either limit the invitation is refused (the page answers 429), whatever the address: the
answer says nothing about accounts. Fails open when the cache cannot be reached, as the
password reset's throttles do (:mod:`registry.signin.throttle`).
"""

from __future__ import annotations

from django.conf import settings

from registry.signin.throttle import counted_usage

PRACTICE_GROUP = "registry.invite-practice"
INVITER_GROUP = "registry.invite-inviter"


class InvitationThrottled(Exception):
    """Too many invitations in the period, for the practice or from the inviter."""


def invitation_count(*, practice_id: int | None, inviter_id: int | None) -> None:
    """Count one invitation; raise :class:`InvitationThrottled` past either limit."""
    counts = [(PRACTICE_GROUP, practice_id, settings.REGISTRY_INVITATION_PRACTICE_RATE)]
    counts.append((INVITER_GROUP, inviter_id, settings.REGISTRY_INVITATION_INVITER_RATE))
    for group, counted_id, rate in counts:
        if counted_id is None:
            continue  # a command, or an account invitation: no one to count
        key = f"{group}:{counted_id}"
        usage = counted_usage(None, group=group, key=lambda group, request, key=key: key, rate=rate)
        if usage is not None and usage["should_limit"]:
            raise InvitationThrottled
