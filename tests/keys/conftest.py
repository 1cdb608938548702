from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from keys.models import SCOPES, KeyEvent
from keys.services import key_mint
from registry.models import Membership, Practice

PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    """Signing in is exercised, not password hashing: a fast hasher keeps the tests quick."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def minted(practice):
    """(key, token) for a key with every scope."""
    return key_mint(practice=practice, scopes=SCOPES, via=KeyEvent.Via.COMMAND)


def make_member(practice: Practice, username: str, role: str = Membership.Role.STAFF) -> User:
    user = User.objects.create_user(username, password=PASSWORD)
    Membership.objects.create(user=user, practice=practice, role=role)
    return user


@pytest.fixture
def staff(practice) -> User:
    return make_member(practice, "sam")


@pytest.fixture
def reviewer(practice) -> User:
    return make_member(practice, "rita", Membership.Role.REVIEWER)
