"""Invitations: a link that works once and expires, stored as a digest, throttled, and the
same answer whether or not the address has an account."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.management import CommandError, call_command
from django.test import Client

from registry.members.services import invitation_send, token_digest
from registry.members.throttle import InvitationThrottled
from registry.models import Invitation, Membership, MembershipEvent
from tests.registry.conftest import signed_in
from tests.registry.factories import PASSWORD

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a much longer passphrase 42"
ORIGIN = "http://testserver"


def invite(practice, email="nina@example.org", role="staff", by=None):
    return invitation_send(practice=practice, email=email, role=role, by=by, origin=ORIGIN)


def accept_new(link: str, client: Client | None = None, password: str = NEW_PASSWORD):
    client = client or Client()
    opened = client.get(link)
    if opened.status_code != 302:
        return client, opened
    form = {
        "first_name": "Nina",
        "last_name": "Okafor",
        "password1": password,
        "password2": password,
    }
    return client, client.post(opened["Location"], form)


def test_only_a_digest_of_the_token_is_stored(st_mary):
    sent = invite(st_mary)
    token = sent.link.rstrip("/").rsplit("/", 1)[1]
    stored = Invitation.objects.get()
    assert stored.token_digest == token_digest(token)
    assert token not in str(Invitation.objects.values().get())


def test_accepting_makes_the_account_signs_in_and_lands_on_the_key_page(st_mary):
    sent = invite(st_mary)
    client, done = accept_new(sent.link)
    assert done.status_code == 302
    assert done["Location"] == "/settings/key/?practice=st-mary"
    page = client.get(done["Location"]).content.decode()
    assert "Welcome to St Mary&#x27;s. Next: mint an API key" in page
    nina = User.objects.get(email="nina@example.org")
    assert (nina.username, nina.get_full_name()) == ("nina@example.org", "Nina Okafor")
    assert nina.check_password(NEW_PASSWORD)
    assert Membership.objects.get(user=nina).role == "staff"
    assert MembershipEvent.objects.filter(action="joined", subject="nina@example.org").exists()


def test_the_link_works_once(st_mary):
    sent = invite(st_mary)
    accept_new(sent.link)
    _, again = accept_new(sent.link)
    assert again.status_code == 404
    assert "Invitation not valid" in again.content.decode()
    assert User.objects.count() == 1


def test_an_expired_link_does_not_work(st_mary):
    sent = invite(st_mary)
    Invitation.objects.update(expires_at=sent.invitation.created_at - timedelta(seconds=1))
    _, page = accept_new(sent.link)
    assert page.status_code == 404
    assert not User.objects.exists()


def test_a_link_that_expires_while_the_form_is_open_makes_no_account(st_mary):
    sent = invite(st_mary)
    client = Client()
    opened = client.get(sent.link)
    Invitation.objects.update(cancelled_at=sent.invitation.created_at)
    form = {"first_name": "N", "last_name": "O", "password1": NEW_PASSWORD}
    refused = client.post(opened["Location"], form | {"password2": NEW_PASSWORD})
    assert refused.status_code == 404
    assert not User.objects.exists()


def test_a_forged_link_does_not_work(st_mary):
    invite(st_mary)
    for token in ["forged", "A" * 43, "../../admin"]:
        page = Client().get(f"/accounts/invitation/{token}/")
        assert page.status_code == 404, token
    assert Client().get("/accounts/invitation/accept/").status_code == 404


def test_the_mail_states_the_days_of_the_setting(st_mary, settings):
    settings.REGISTRY_PASSWORD_RESET = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.REGISTRY_INVITATION_DAYS = 2
    invite(st_mary)
    [message] = mail.outbox
    assert "open this link within 2 days" in message.body
    assert message.subject == "You are invited to St Mary's in the birth registry"


def test_a_weak_password_is_refused_by_djangos_validators(st_mary):
    sent = invite(st_mary)
    _, page = accept_new(sent.link, password="password")
    assert page.status_code == 400
    assert "This password is too common" in page.content.decode()
    assert not User.objects.exists()


def test_an_address_with_an_account_joins_on_sign_in_and_keeps_its_password(st_mary, riverside):
    sam = User.objects.create_user("sam", email="Sam@Example.org", password=PASSWORD)
    sent = invite(st_mary, email="sam@example.org", role="reviewer")
    client = Client()
    opened = client.get(sent.link)
    asks = client.get(opened["Location"]).content.decode()
    assert "Sign in to accept" in asks
    # Posting a password to the page sets nothing: the account's owner must sign in.
    form = {"first_name": "X", "last_name": "Y", "password1": NEW_PASSWORD}
    client.post(opened["Location"], form | {"password2": NEW_PASSWORD})
    sam.refresh_from_db()
    assert sam.check_password(PASSWORD)
    assert not Membership.objects.exists()
    signed = client.post(
        f"/accounts/login/?next={opened['Location']}",
        {"username": "sam", "password": PASSWORD, "next": opened["Location"]},
    )
    assert signed["Location"] == opened["Location"]
    assert "Accept" in client.get(opened["Location"]).content.decode()
    done = client.post(opened["Location"])
    assert done["Location"] == "/settings/key/?practice=st-mary"
    assert Membership.objects.get(user=sam).role == "reviewer"
    sam.refresh_from_db()
    assert sam.check_password(PASSWORD) and sam.is_staff  # a reviewer reviews in the admin


def test_inviting_answers_the_same_whether_or_not_the_address_has_an_account(st_mary, staff):
    User.objects.create_user("kim", email="kim@example.org", password=PASSWORD)
    client = signed_in(staff)
    url = "/settings/members/?practice=st-mary"
    answers = [
        client.post(url, {"action": "invite", "email": email, "role": "staff"})
        for email in ["kim@example.org", "lee@example.org"]
    ]
    emails = ["kim@example.org", "lee@example.org"]
    shown = [
        _varying_parts_masked(answer.content.decode().replace(email, "ADDRESS"))
        for answer, email in zip(answers, emails, strict=True)
    ]
    assert [answer.status_code for answer in answers] == [200, 200]
    assert shown[0] == shown[1]


def _varying_parts_masked(page: str) -> str:
    """The page without what differs on every answer: the link's token, the form's token."""
    page = re.sub(r"/accounts/invitation/[\w-]+/", "LINK", page)
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "CSRF", page)


def test_with_mail_configured_the_link_is_mailed_and_not_shown(st_mary, staff, settings):
    settings.REGISTRY_PASSWORD_RESET = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client = signed_in(staff)
    sent = client.post(
        "/settings/members/?practice=st-mary",
        {"action": "invite", "email": "nina@example.org", "role": "staff"},
        follow=True,
    )
    page = sent.content.decode()
    assert "Invitation sent to nina@example.org" in page
    assert "/accounts/invitation/" not in page
    [message] = mail.outbox
    assert message.to == ["nina@example.org"]
    assert "/accounts/invitation/" in message.body


def test_without_mail_the_link_is_shown_once_and_not_kept(st_mary, staff):
    client = signed_in(staff)
    shown = client.post(
        "/settings/members/?practice=st-mary",
        {"action": "invite", "email": "nina@example.org", "role": "staff"},
    )
    assert "no-store" in shown["Cache-Control"]
    [link] = re.findall(r"http://testserver/accounts/invitation/[\w-]+/", shown.content.decode())
    later = client.get("/settings/members/?practice=st-mary").content.decode()
    assert "nina@example.org" in later and link not in later


def test_invitations_are_throttled_per_practice_and_per_inviter(
    st_mary, riverside, staff, settings
):
    settings.REGISTRY_INVITATION_PRACTICE_RATE = "2/h"
    settings.REGISTRY_INVITATION_INVITER_RATE = "3/h"
    for i in range(2):
        invite(st_mary, email=f"a{i}@example.org", by=staff)
    with pytest.raises(InvitationThrottled):
        invite(st_mary, email="a2@example.org", by=staff)  # the practice's limit
    invite(riverside, email="b0@example.org", by=staff)
    with pytest.raises(InvitationThrottled):
        invite(riverside, email="b1@example.org", by=staff)  # the inviter's limit
    client = signed_in(staff)
    refused = client.post(
        "/settings/members/?practice=st-mary",
        {"action": "invite", "email": "c@example.org", "role": "staff"},
    )
    assert refused.status_code == 429
    assert "Too many invitations" in refused.content.decode()


def test_no_account_is_made_without_an_address(st_mary):
    with pytest.raises(Exception, match="valid email"):
        invite(st_mary, email="")
    assert not Invitation.objects.exists()


def test_addmember_with_an_address_invites_without_a_prompt(capsys, st_mary):
    call_command("addmember", "st-mary", "nina@example.org", "--role", "reviewer")
    out = capsys.readouterr().out
    assert "Invited nina@example.org to st-mary as reviewer" in out
    [link] = re.findall(r"http://localhost:\d+/accounts/invitation/[\w-]+/", out)
    invitation = Invitation.objects.get()
    assert invitation.role == "reviewer" and invitation.invited_by is None
    assert not User.objects.exists()  # the account is made when the link is used
    path = link.split("localhost", 1)[1].split("/", 1)[1]
    assert Client().get(f"/{path}").status_code == 302


def test_addmember_refuses_a_bad_address(st_mary):
    with pytest.raises(CommandError, match="valid email"):
        call_command("addmember", "st-mary", "nina@", "--role", "staff")


def test_a_practice_invitation_never_gives_a_password_to_an_existing_account(st_mary, staff):
    """Without mail the inviter sees the link: it must not open an account that has none."""
    admin = User.objects.create_superuser("admin", email="admin@example.org", password=None)
    shown = signed_in(staff).post(
        "/settings/members/?practice=st-mary",
        {"action": "invite", "email": "admin@example.org", "role": "staff"},
    )
    [link] = re.findall(r"http://testserver(/accounts/invitation/[\w-]+/)", shown.content.decode())
    client, _ = accept_new(link)
    assert "Sign in to accept" in client.get("/accounts/invitation/accept/").content.decode()
    admin.refresh_from_db()
    assert not admin.has_usable_password()
    assert not Membership.objects.filter(user=admin).exists()
