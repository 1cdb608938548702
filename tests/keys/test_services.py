from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from keys.models import INGEST_READ, INGEST_WRITE, SCOPES, ApiKey, KeyEvent, token_digest
from keys.services import (
    ActiveKeyExists,
    KeyChanged,
    key_mint,
    key_revoke,
    key_rotate,
)
from registry.models import Practice

pytestmark = pytest.mark.django_db

COMMAND = KeyEvent.Via.COMMAND


def test_a_minted_token_is_rgk_and_40_base62_characters(practice):
    _, token = key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    assert re.fullmatch(r"rgk_[0-9A-Za-z]{40}", token)


def test_only_the_prefix_and_the_sha256_digest_are_stored(practice):
    key, token = key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    key.refresh_from_db()
    assert token.startswith(key.prefix)
    assert len(key.prefix) == 12
    assert key.digest == token_digest(token)
    stored = [str(value) for value in ApiKey.objects.values_list().get(pk=key.pk)]
    assert not any(token in value for value in stored)
    assert key.matches(token)


def test_tokens_are_different_every_time(practice, other_practice):
    _, first = key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    _, second = key_mint(practice=other_practice, scopes=SCOPES, via=COMMAND)
    assert first != second
    assert first[:12] != second[:12]


def test_mint_refuses_a_second_active_key(practice):
    key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    with pytest.raises(ActiveKeyExists, match="already has an active key"):
        key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    assert ApiKey.objects.filter(practice=practice).count() == 1


def test_the_database_refuses_a_second_active_key_whatever_the_code_does(practice):
    key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    with pytest.raises(IntegrityError), transaction.atomic():
        ApiKey.objects.create(practice=practice, prefix="rgk_aaaaaaaa", digest="0" * 64)


def test_revoked_keys_do_not_count_against_the_one_active_key(practice):
    key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    key_revoke(practice=practice, via=COMMAND)
    key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    assert ApiKey.objects.filter(practice=practice).count() == 2
    assert ApiKey.objects.filter(practice=practice, revoked_at__isnull=True).count() == 1


@pytest.mark.parametrize("scopes", [[], ["ingest:delete"], [INGEST_READ, "admin"], ["  "]])
def test_mint_refuses_empty_or_unknown_scopes(practice, scopes):
    with pytest.raises(ValidationError):
        key_mint(practice=practice, scopes=scopes, via=COMMAND)
    assert not ApiKey.objects.exists()


def test_scopes_are_kept_in_canonical_order_without_repeats(practice):
    key, _ = key_mint(
        practice=practice, scopes=[INGEST_READ, INGEST_WRITE, INGEST_READ], via=COMMAND
    )
    key.refresh_from_db()
    assert key.scopes == [INGEST_WRITE, INGEST_READ]
    assert key.has_scope(INGEST_READ)
    assert not key.has_scope("ingest:delete")


def test_an_unknown_via_is_refused_and_nothing_is_minted(practice):
    with pytest.raises(ValueError, match="via"):
        key_mint(practice=practice, scopes=SCOPES, via="email")
    assert not ApiKey.objects.exists()


def test_rotate_revokes_the_old_key_and_mints_a_new_one_with_the_same_scopes(practice):
    user = User.objects.create_user("sam")
    old, old_token = key_mint(practice=practice, scopes=[INGEST_READ], via=COMMAND)
    new, new_token = key_rotate(practice=practice, by=user, via=KeyEvent.Via.SETTINGS)
    old.refresh_from_db()
    assert old.revoked_at is not None
    assert old.revoked_by == user
    assert new.is_active
    assert new.scopes == [INGEST_READ]
    assert new.created_by == user
    assert new_token != old_token


def test_rotate_can_change_the_scopes(practice):
    key_mint(practice=practice, scopes=[INGEST_READ], via=COMMAND)
    new, _ = key_rotate(practice=practice, scopes=SCOPES, via=COMMAND)
    assert new.scopes == list(SCOPES)


def test_rotate_without_an_active_key_mints_one(practice):
    key, _ = key_rotate(practice=practice, via=COMMAND)
    assert key.scopes == list(SCOPES)
    assert KeyEvent.objects.get().action == KeyEvent.Action.MINT


def test_rotate_with_an_outdated_expected_prefix_changes_nothing(practice):
    old, _ = key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    with pytest.raises(KeyChanged):
        key_rotate(practice=practice, via=COMMAND, expected_prefix="rgk_00000000")
    old.refresh_from_db()
    assert old.is_active
    assert ApiKey.objects.count() == 1


def test_revoke_without_an_active_key_returns_none(practice):
    assert key_revoke(practice=practice, via=COMMAND) is None
    assert not KeyEvent.objects.exists()


def test_revoke_with_an_outdated_expected_prefix_changes_nothing(practice):
    old, _ = key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    with pytest.raises(KeyChanged):
        key_revoke(practice=practice, via=COMMAND, expected_prefix="rgk_00000000")
    old.refresh_from_db()
    assert old.is_active


def test_every_mint_rotation_and_revocation_is_recorded(practice):
    user = User.objects.create_user("sam")
    first, _ = key_mint(practice=practice, scopes=SCOPES, by=user, via=KeyEvent.Via.SETTINGS)
    second, _ = key_rotate(practice=practice, by=user, via=KeyEvent.Via.ADMIN)
    key_revoke(practice=practice, via=COMMAND)
    events = list(KeyEvent.objects.order_by("at", "id"))
    assert [(e.action, e.via, e.by, e.key_prefix, e.previous_prefix) for e in events] == [
        ("mint", "settings", user, first.prefix, ""),
        ("rotate", "admin", user, second.prefix, first.prefix),
        ("revoke", "command", None, second.prefix, ""),
    ]
    assert events[0].by_username == "sam"
    assert all(e.practice == practice for e in events)


def test_the_trail_keeps_the_username_after_the_user_is_deleted(practice):
    user = User.objects.create_user("sam")
    key_mint(practice=practice, scopes=SCOPES, by=user, via=KeyEvent.Via.SETTINGS)
    user.delete()
    event = KeyEvent.objects.get()
    assert event.by is None
    assert event.by_username == "sam"


def test_a_failed_rotation_leaves_the_old_key_active(practice):
    old, _ = key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
    with pytest.raises(ValidationError):
        key_rotate(practice=practice, scopes=["nope"], via=COMMAND)
    old.refresh_from_db()
    assert old.is_active


@pytest.mark.django_db(transaction=True)
def test_concurrent_mints_for_one_practice_leave_exactly_one_active_key():
    practice = Practice.objects.create(slug="busy")

    def mint() -> str:
        try:
            key_mint(practice=practice, scopes=SCOPES, via=COMMAND)
            return "minted"
        except ActiveKeyExists:
            return "refused"
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda _: mint(), range(6)))
    assert results.count("minted") == 1
    assert results.count("refused") == 5
    assert ApiKey.objects.filter(practice=practice, revoked_at__isnull=True).count() == 1
