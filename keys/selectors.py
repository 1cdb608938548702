"""Reads of API keys."""

from __future__ import annotations

from django.db.models import QuerySet

from keys.models import ApiKey, KeyEvent, token_prefix
from registry.models import Practice


def key_for_token(token: str) -> ApiKey | None:
    """The key a well-formed token names by its prefix, revoked or not, with its practice.

    Deliberately uncached: a revocation must hold from the next request in every process.
    """
    return ApiKey.objects.select_related("practice").filter(prefix=token_prefix(token)).first()


def key_active_for(*, practice: Practice) -> ApiKey | None:
    return (
        ApiKey.objects.select_related("created_by")
        .filter(practice=practice, revoked_at__isnull=True)
        .first()
    )


def key_events_for(*, practice: Practice, limit: int = 10) -> QuerySet[KeyEvent]:
    return KeyEvent.objects.filter(practice=practice).order_by("-at", "-id")[:limit]
