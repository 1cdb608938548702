"""What several management commands share: finding their practice by slug."""

from __future__ import annotations

from django.core.management.base import CommandError

from registry.models import Practice


def practice_or_error(slug: str) -> Practice:
    try:
        return Practice.objects.get(slug=slug)
    except Practice.DoesNotExist:
        raise CommandError(
            f"No practice {slug!r}; create it with: manage.py createpractice {slug}"
        ) from None
