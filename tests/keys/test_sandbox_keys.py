"""Sandbox keys start ``rgk_test_`` and no other key does; a key's kind always fits its practice."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError
from rest_framework.exceptions import AuthenticationFailed

from keys.authentication import ApiKeyAuthentication
from keys.models import (
    SCOPES,
    KeyEvent,
    is_sandbox_token,
    is_well_formed,
    new_token,
    token_prefix,
)
from keys.services import key_mint, key_revoke, key_rotate
from registry.models import Practice
from registry.services import practice_set_sandbox
from tests.registry.factories import birth

pytestmark = pytest.mark.django_db

LIVE = re.compile(r"rgk_[0-9A-Za-z]{40}")
SANDBOX = re.compile(r"rgk_test_[0-9A-Za-z]{40}")


@pytest.fixture
def sandbox(db) -> Practice:
    return Practice.objects.create(slug="acme-test", name="Acme EHR (test)", sandbox=True)


def mint(practice: Practice) -> str:
    return key_mint(practice=practice, scopes=SCOPES, via=KeyEvent.Via.COMMAND)[1]


def authenticates(rf, token: str) -> bool:
    request = rf.get("/", HTTP_AUTHORIZATION=f"Bearer {token}")
    try:
        return ApiKeyAuthentication().authenticate(request) is not None
    except AuthenticationFailed:
        return False


def test_a_sandbox_key_starts_rgk_test_and_a_live_key_never_does(sandbox, practice, rf):
    test_token, live_token = mint(sandbox), mint(practice)
    assert SANDBOX.fullmatch(test_token) and is_sandbox_token(test_token)
    assert LIVE.fullmatch(live_token) and not is_sandbox_token(live_token)
    assert authenticates(rf, test_token) and authenticates(rf, live_token)
    assert sandbox.api_keys.get().prefix == test_token[:17] == token_prefix(test_token)
    assert practice.api_keys.get().prefix == live_token[:12] == token_prefix(live_token)


def test_no_live_token_can_start_rgk_test_():
    # Base62 has no underscore: "rgk_test_..." is never the start of a live token.
    assert not any(new_token()[len("rgk_") :].count("_") for _ in range(2000))
    assert all(new_token(sandbox=True).startswith("rgk_test_") for _ in range(50))


@pytest.mark.parametrize(
    ("token", "well_formed"),
    [
        ("rgk_" + "a" * 40, True),
        ("rgk_test_" + "a" * 40, True),
        ("rgk_test_" + "a" * 39, False),
        ("rgk_test" + "a" * 40, False),  # "rgk_" then "testaaa...": 44 characters, too long
        ("rgk_live_" + "a" * 40, False),
        ("rgk_test_test_" + "a" * 40, False),
    ],
)
def test_both_kinds_are_well_formed_and_nothing_in_between(token, well_formed):
    assert is_well_formed(token) is well_formed


def test_rotating_a_sandbox_key_mints_another_sandbox_key(sandbox):
    mint(sandbox)
    _, token = key_rotate(practice=sandbox, via=KeyEvent.Via.COMMAND)
    assert SANDBOX.fullmatch(token)


def test_the_flag_cannot_change_while_a_key_is_active(practice):
    mint(practice)
    with pytest.raises(ValidationError, match="an active API key"):
        practice_set_sandbox(practice=practice, sandbox=True)
    assert not Practice.objects.get(pk=practice.pk).sandbox


def test_the_flag_cannot_change_while_the_practice_holds_records(sandbox):
    birth(sandbox)
    with pytest.raises(ValidationError, match="records"):
        practice_set_sandbox(practice=sandbox, sandbox=False)
    assert Practice.objects.get(pk=sandbox.pk).sandbox


def test_an_empty_practice_without_a_key_changes_kind_and_its_next_key_follows(practice, rf):
    old = mint(practice)
    key_revoke(practice=practice, via=KeyEvent.Via.COMMAND)
    practice_set_sandbox(practice=practice, sandbox=True)
    assert SANDBOX.fullmatch(mint(practice))
    assert not authenticates(rf, old)


def test_a_key_whose_kind_no_longer_fits_its_practice_is_refused(practice, rf):
    token = mint(practice)
    Practice.objects.filter(pk=practice.pk).update(sandbox=True)  # behind the services' back
    assert not authenticates(rf, token)
