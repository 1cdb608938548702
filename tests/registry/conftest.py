from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from registry.models import Membership, Practice
from tests.registry.factories import PASSWORD, PracticeFactory, member


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    """Signing in is exercised, not password hashing: a fast hasher keeps the tests quick."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def st_mary(db) -> Practice:
    return PracticeFactory(slug="st-mary", name="St Mary's")


@pytest.fixture
def riverside(db) -> Practice:
    return PracticeFactory(slug="riverside", name="Riverside")


@pytest.fixture
def staff(st_mary) -> User:
    """A staff member of St Mary's: sees statistics, is not a reviewer."""
    return member(st_mary, "sam")


@pytest.fixture
def reviewer(st_mary) -> User:
    """A reviewer of St Mary's, with the staff status `addmember --role reviewer` grants."""
    return member(st_mary, "rita", Membership.Role.REVIEWER, is_staff=True)


@pytest.fixture
def riverside_reviewer(riverside) -> User:
    return member(riverside, "rory", Membership.Role.REVIEWER, is_staff=True)


@pytest.fixture
def superuser(db) -> User:
    return User.objects.create_superuser("root", password=PASSWORD)


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client
