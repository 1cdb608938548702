"""Writes to API keys: mint, rotate, revoke (each recorded as a KeyEvent), and last use.

Every change locks the practice row first, so concurrent changes to one practice's key take
turns; the partial unique constraint on ``ApiKey`` is the backstop. The raw token is
returned to the caller once and never stored or logged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from keys.cache import key_cache_revoked
from keys.models import SCOPES, ApiKey, KeyEvent, new_token, token_digest, token_prefix
from registry.models import Practice

log = logging.getLogger(__name__)

# How stale ``last_used_at`` may get: at most one UPDATE per key per minute.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class KeyStateError(Exception):
    """The practice's key is not in the state the caller expected."""


class ActiveKeyExists(KeyStateError):
    def __init__(self, practice: Practice, key: ApiKey) -> None:
        super().__init__(
            f"Practice {practice.slug} already has an active key ({key.prefix}…); "
            "rotate it or revoke it first."
        )


class KeyChanged(KeyStateError):
    def __init__(self, practice: Practice) -> None:
        super().__init__(
            f"The key of practice {practice.slug} changed in the meantime; nothing was done."
        )


def key_mint(
    *, practice: Practice, scopes: Iterable[str], by: User | None = None, via: str
) -> tuple[ApiKey, str]:
    """Mint the practice's key; refused with :class:`ActiveKeyExists` while one is active."""
    chosen = clean_scopes(scopes)
    with transaction.atomic():
        active = _lock_active_key(practice)
        if active is not None:
            raise ActiveKeyExists(practice, active)
        key, token = _create_key(practice=practice, scopes=chosen, by=by)
        _record(key=key, action=KeyEvent.Action.MINT, via=via, by=by)
    return key, token


def key_rotate(
    *,
    practice: Practice,
    by: User | None = None,
    via: str,
    scopes: Iterable[str] | None = None,
    expected_prefix: str | None = None,
) -> tuple[ApiKey, str]:
    """Revoke the active key and mint its successor in one transaction.

    ``scopes`` defaults to the old key's. With no active key this is a plain mint. With
    ``expected_prefix`` (what the person confirming saw), a key changed in the meantime
    raises :class:`KeyChanged` instead of rotating a key nobody looked at.
    """
    chosen = clean_scopes(scopes) if scopes is not None else None
    with transaction.atomic():
        old = _lock_active_key(practice)
        _check_expected(practice, old, expected_prefix)
        if chosen is None:
            chosen = list(old.scopes) if old is not None else list(SCOPES)
        if old is not None:
            _revoke(old, by=by)
        key, token = _create_key(practice=practice, scopes=chosen, by=by)
        action = KeyEvent.Action.ROTATE if old is not None else KeyEvent.Action.MINT
        previous = old.prefix if old is not None else ""
        _record(key=key, action=action, via=via, by=by, previous_prefix=previous)
    return key, token


def key_revoke(
    *,
    practice: Practice,
    by: User | None = None,
    via: str,
    expected_prefix: str | None = None,
) -> ApiKey | None:
    """Revoke the active key, if any; it is refused from the next request on."""
    with transaction.atomic():
        key = _lock_active_key(practice)
        _check_expected(practice, key, expected_prefix)
        if key is None:
            return None
        _revoke(key, by=by)
        _record(key=key, action=KeyEvent.Action.REVOKE, via=via, by=by)
    return key


def key_mark_used(*, key: ApiKey) -> None:
    """Note that the key was used: at most one conditional UPDATE per key per minute."""
    now = timezone.now()
    if key.last_used_at is not None and now - key.last_used_at < LAST_USED_RESOLUTION:
        return
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ApiKey.objects.filter(stale, pk=key.pk).update(last_used_at=now)
    key.last_used_at = now


def clean_scopes(scopes: Iterable[str]) -> list[str]:
    """At least one scope, all known; returned in the canonical order without repeats."""
    chosen = {scope.strip() for scope in scopes if scope.strip()}
    unknown = sorted(chosen.difference(SCOPES))
    if unknown:
        raise ValidationError(
            f"Unknown scope {', '.join(unknown)}; choose from {', '.join(SCOPES)}."
        )
    if not chosen:
        raise ValidationError(f"Choose at least one scope: {', '.join(SCOPES)}.")
    return [scope for scope in SCOPES if scope in chosen]


def _lock_active_key(practice: Practice) -> ApiKey | None:
    # NO KEY UPDATE: serialises key changes without blocking inserts that reference the
    # practice (they take KEY SHARE), so ingestion carries on while a key is minted. The
    # sandbox flag is read under the lock: it decides the kind of token minted, and
    # practice_set_sandbox (which takes the same row lock) refuses while a key is active.
    locked = Practice.objects.select_for_update(no_key=True).filter(pk=practice.pk)
    practice.sandbox = bool(locked.values_list("sandbox", flat=True).first())
    return ApiKey.objects.filter(practice=practice, revoked_at__isnull=True).first()


def _check_expected(practice: Practice, key: ApiKey | None, expected_prefix: str | None) -> None:
    if expected_prefix is not None and (key is None or key.prefix != expected_prefix):
        raise KeyChanged(practice)


def _create_key(*, practice: Practice, scopes: list[str], by: User | None) -> tuple[ApiKey, str]:
    token = new_token(sandbox=practice.sandbox)
    key = ApiKey.objects.create(
        practice=practice,
        prefix=token_prefix(token),
        digest=token_digest(token),
        scopes=scopes,
        created_by=by,
    )
    return key, token


def _revoke(key: ApiKey, *, by: User | None) -> None:
    key.revoked_at = timezone.now()
    key.revoked_by = by
    key.save(update_fields=["revoked_at", "revoked_by"])
    # At once, so that from here on no request can cache the key as active; and again after
    # the commit, so that the tombstone outlives the transaction by a cache lifetime.
    prefix = key.prefix
    key_cache_revoked(prefix)

    def forget_cached_copies() -> None:
        key_cache_revoked(prefix)

    transaction.on_commit(forget_cached_copies, robust=True)


def _record(
    *, key: ApiKey, action: str, via: str, by: User | None, previous_prefix: str = ""
) -> None:
    if via not in KeyEvent.Via.values:
        raise ValueError(f"via must be one of {', '.join(KeyEvent.Via.values)}")
    KeyEvent.objects.create(
        practice=key.practice,
        key=key,
        action=action,
        via=via,
        by=by,
        by_username=by.get_username() if by is not None else "",
        key_prefix=key.prefix,
        previous_prefix=previous_prefix,
    )
    log.info(
        "api key %s %s for practice %s via %s by %s",
        key.prefix,
        action,
        key.practice.slug,
        via,
        by.get_username() if by is not None else "-",
    )
