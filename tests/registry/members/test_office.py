"""The registry-office role: who holds it, how it is granted, and what it sees."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.management import CommandError, call_command

from registry.models import Invitation, MembershipEvent
from registry.office import is_registry_office, office_permission
from tests.registry.conftest import signed_in
from tests.registry.factories import PASSWORD

pytestmark = pytest.mark.django_db

LINK = re.compile(r"http://localhost:\d+/accounts/invitation/[\w-]+/")


def office_user(username: str = "olga") -> User:
    user = User.objects.create_user(username, email=f"{username}@example.org", password=PASSWORD)
    user.user_permissions.add(office_permission())
    return User.objects.get(pk=user.pk)  # a fresh object: permissions are cached on it


def test_the_role_is_the_permission_and_superusers_hold_it(superuser, staff):
    assert is_registry_office(office_user())
    assert is_registry_office(superuser)
    assert not is_registry_office(staff)
    assert not is_registry_office(AnonymousUser())
    inactive = office_user("ivy")
    inactive.is_active = False
    assert not is_registry_office(inactive)


def test_the_command_creates_an_account_with_the_address_and_prints_a_link_once(capsys):
    call_command("grantregistryoffice", "Olga@Example.org")
    olga = User.objects.get(email="olga@example.org")
    assert is_registry_office(olga)
    assert not olga.has_usable_password()
    out = capsys.readouterr().out
    assert "Created olga@example.org: registry office" in out
    [link] = LINK.findall(out)
    invitation = Invitation.objects.get(email="olga@example.org")
    assert invitation.practice is None
    assert link.rsplit("/", 2)[1] not in invitation.token_digest  # only the digest is stored
    event = MembershipEvent.objects.get(action=MembershipEvent.Action.OFFICE_GRANTED)
    assert event.subject == "olga@example.org"


def test_the_command_grants_an_existing_account_without_touching_its_password(capsys):
    User.objects.create_user("olga", email="olga@example.org", password=PASSWORD)
    call_command("grantregistryoffice", "olga@example.org")
    olga = User.objects.get(username="olga")
    assert is_registry_office(olga)
    assert olga.check_password(PASSWORD)
    assert not LINK.findall(capsys.readouterr().out)
    assert not Invitation.objects.exists()


def test_the_command_refuses_a_bad_address():
    with pytest.raises(CommandError, match="valid email"):
        call_command("grantregistryoffice", "not-an-address")
    assert not User.objects.exists()


def test_the_registry_office_sees_any_practice_as_its_staff_would(st_mary, riverside, staff):
    office = signed_in(office_user())
    page = office.get("/settings/key/?practice=riverside")
    assert page.status_code == 200
    assert "Registry office" in page.content.decode()
    assert "Mint a key" in page.content.decode()
    assert office.get("/settings/members/?practice=riverside").status_code == 200
    assert office.get("/settings/practices/").status_code == 200
    # A practice's own staff still see only their own.
    assert signed_in(staff).get("/settings/key/?practice=riverside").status_code == 404
