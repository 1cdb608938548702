"""The settings area's key page: /settings/key/ and its mint, rotate and revoke steps."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.exceptions import AuthenticationFailed

from keys.authentication import ApiKeyAuthentication
from keys.models import INGEST_READ, INGEST_WRITE, SCOPES, ApiKey, KeyEvent
from keys.services import key_mint
from tests.keys.conftest import PASSWORD, make_member

pytestmark = pytest.mark.django_db

KEY_PAGE = "/settings/key/"
TOKEN_IN_PAGE = re.compile(r'<textarea id="token"[^>]*>(rgk_[0-9A-Za-z]{40})</textarea>')


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def token_from(response) -> str:
    match = TOKEN_IN_PAGE.search(response.content.decode())
    assert match, "the page shows the new token"
    return match.group(1)


def authenticates(rf, token: str) -> bool:
    request = rf.get("/", HTTP_AUTHORIZATION=f"Bearer {token}")
    try:
        return ApiKeyAuthentication().authenticate(request) is not None
    except AuthenticationFailed:
        return False


def active_key(practice) -> ApiKey | None:
    return ApiKey.objects.filter(practice=practice, revoked_at__isnull=True).first()


# --- Signing in ------------------------------------------------------------------------------


def test_the_settings_area_asks_a_visitor_to_sign_in(client):
    for path in ["/settings/", KEY_PAGE, f"{KEY_PAGE}mint/", f"{KEY_PAGE}revoke/"]:
        response = client.get(path, follow=True)
        assert response.redirect_chain[-1][0].startswith("/accounts/login/?next=")
        assert response.status_code == 200


def test_signing_in_leads_to_the_key_page(client, staff):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert b'name="username"' in page.content
    response = client.post("/accounts/login/", {"username": "sam", "password": PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == KEY_PAGE
    assert client.get(KEY_PAGE).status_code == 200


def test_a_wrong_password_is_refused(client, staff):
    response = client.post("/accounts/login/", {"username": "sam", "password": "nope"})
    assert response.status_code == 200
    assert b"enter a correct username and password" in response.content


def test_signing_out_is_a_post(staff):
    client = signed_in(staff)
    assert client.get("/accounts/logout/").status_code == 405
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get(KEY_PAGE).status_code == 302


def test_settings_redirects_to_the_key_page(staff):
    response = signed_in(staff).get("/settings/")
    assert response.status_code == 302
    assert response["Location"] == KEY_PAGE


def test_a_user_with_no_practice_is_told_so(db):
    user = User.objects.create_user("nobody", password=PASSWORD)
    response = signed_in(user).get(KEY_PAGE)
    assert response.status_code == 403
    assert b"not a member of any practice" in response.content


# --- Seeing the key --------------------------------------------------------------------------


def test_the_key_page_offers_to_mint_when_there_is_no_key(staff):
    response = signed_in(staff).get(KEY_PAGE)
    assert response.status_code == 200
    body = response.content.decode()
    assert "No active key" in body
    assert "/settings/key/mint/?practice=st-mary" in body


def test_the_key_page_shows_the_key_but_never_the_token(staff, minted):
    key, token = minted
    response = signed_in(staff).get(KEY_PAGE)
    body = response.content.decode()
    assert f"{key.prefix}…" in body
    assert INGEST_WRITE in body
    assert INGEST_READ in body
    assert "Never" in body  # not used yet
    assert token not in body
    assert key.digest not in body
    assert "Rotate key" in body
    assert "Revoke key" in body


def test_the_key_page_lists_the_history(staff, minted):
    body = signed_in(staff).get(KEY_PAGE).content.decode()
    assert "History" in body
    assert "Minted" in body
    assert "Management command" in body


def test_a_reviewer_sees_the_key_read_only(reviewer, minted):
    key, _ = minted
    body = signed_in(reviewer).get(KEY_PAGE).content.decode()
    assert f"{key.prefix}…" in body
    assert "Rotate key" not in body
    assert "Revoke key" not in body
    assert "Staff members of this practice mint, rotate and revoke it" in body


@pytest.mark.parametrize("action", ["mint", "rotate", "revoke"])
def test_a_reviewer_may_not_change_the_key(reviewer, minted, action):
    key, _ = minted
    client = signed_in(reviewer)
    assert client.get(f"{KEY_PAGE}{action}/").status_code == 403
    data = {"scopes": list(SCOPES), "key": key.prefix}
    assert client.post(f"{KEY_PAGE}{action}/", data).status_code == 403
    assert active_key(key.practice) == key
    assert KeyEvent.objects.count() == 1


def test_a_superuser_member_manages_the_key_whatever_the_role(practice, minted):
    boss = make_member(practice, "boss", "reviewer")
    boss.is_superuser = True
    boss.save()
    key, _ = minted
    response = signed_in(boss).post(f"{KEY_PAGE}revoke/", {"key": key.prefix})
    assert response.status_code == 302
    assert active_key(practice) is None


# --- Minting ---------------------------------------------------------------------------------


def test_minting_asks_for_scopes_first(staff):
    response = signed_in(staff).get(f"{KEY_PAGE}mint/")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'type="checkbox" name="scopes" value="ingest:write"' in body
    assert "shown <strong>once</strong>" in body
    assert '<a href="/settings/key/" aria-current="page">API key</a>' in body
    assert not ApiKey.objects.exists()


def test_minting_shows_the_token_once_with_a_copy_button_and_no_store(staff, practice):
    client = signed_in(staff)
    response = client.post(f"{KEY_PAGE}mint/", {"scopes": [INGEST_WRITE]})
    assert response.status_code == 200
    token = token_from(response)
    body = response.content.decode()
    assert "data-copy" in body
    assert "cannot be shown again" in body
    assert "no-store" in response["Cache-Control"]
    key = active_key(practice)
    assert key is not None
    assert key.matches(token)
    assert key.scopes == [INGEST_WRITE]
    assert key.created_by == staff
    event = KeyEvent.objects.get()
    assert (event.action, event.via, event.by, event.key_prefix) == (
        "mint",
        "settings",
        staff,
        key.prefix,
    )
    # Never again: the key page shows the prefix only.
    assert token not in client.get(KEY_PAGE).content.decode()


def test_minting_without_a_scope_is_refused(staff):
    response = signed_in(staff).post(f"{KEY_PAGE}mint/", {})
    assert response.status_code == 200
    assert b"Choose at least one scope." in response.content
    assert not ApiKey.objects.exists()


def test_minting_an_unknown_scope_is_refused(staff):
    response = signed_in(staff).post(f"{KEY_PAGE}mint/", {"scopes": ["ingest:everything"]})
    assert b"not one of the available choices" in response.content
    assert not ApiKey.objects.exists()


def test_minting_while_a_key_is_active_is_refused(staff, minted):
    client = signed_in(staff)
    assert client.get(f"{KEY_PAGE}mint/")["Location"] == f"{KEY_PAGE}?practice=st-mary"
    response = client.post(f"{KEY_PAGE}mint/", {"scopes": list(SCOPES)}, follow=True)
    assert b"already has an active key" in response.content
    assert ApiKey.objects.count() == 1


def test_changes_need_a_csrf_token(staff):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    assert client.post(f"{KEY_PAGE}mint/", {"scopes": list(SCOPES)}).status_code == 403
    assert not ApiKey.objects.exists()


def test_key_pages_refuse_other_methods(staff):
    client = signed_in(staff)
    assert client.put(f"{KEY_PAGE}mint/").status_code == 405
    assert client.post(KEY_PAGE).status_code == 405


# --- Rotating and revoking -------------------------------------------------------------------


def test_rotating_asks_for_confirmation_naming_the_key(staff, minted):
    key, _ = minted
    response = signed_in(staff).get(f"{KEY_PAGE}rotate/")
    body = response.content.decode()
    assert response.status_code == 200
    assert f"Rotating revokes <code>{key.prefix}…</code>" in body
    assert f'name="key" value="{key.prefix}"' in body
    assert active_key(key.practice) == key


def test_rotating_shows_the_new_token_and_locks_the_old_one_out(rf, staff, practice, minted):
    old, old_token = minted
    response = signed_in(staff).post(
        f"{KEY_PAGE}rotate/", {"scopes": [INGEST_READ], "key": old.prefix}
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    new_token = token_from(response)
    new = active_key(practice)
    assert new.matches(new_token)
    assert new.scopes == [INGEST_READ]
    old.refresh_from_db()
    assert old.revoked_at is not None
    assert old.revoked_by == staff
    event = KeyEvent.objects.order_by("-id").first()
    assert (event.action, event.via, event.previous_prefix) == ("rotate", "settings", old.prefix)
    assert authenticates(rf, new_token)
    assert not authenticates(rf, old_token)


def test_rotating_a_key_that_changed_meanwhile_does_nothing(staff, practice, minted):
    key, _ = minted
    response = signed_in(staff).post(
        f"{KEY_PAGE}rotate/", {"scopes": list(SCOPES), "key": "rgk_00000000"}, follow=True
    )
    assert b"changed in the meantime" in response.content
    assert active_key(practice) == key


def test_rotating_without_a_key_sends_you_to_mint(staff):
    response = signed_in(staff).get(f"{KEY_PAGE}rotate/", follow=True)
    assert b"no active key to rotate" in response.content


def test_revoking_asks_for_confirmation_then_revokes(rf, staff, practice, minted):
    key, token = minted
    assert authenticates(rf, token)
    client = signed_in(staff)
    confirm = client.get(f"{KEY_PAGE}revoke/")
    assert confirm.status_code == 200
    assert b"cannot be undone" in confirm.content
    assert active_key(practice) == key

    response = client.post(f"{KEY_PAGE}revoke/", {"key": key.prefix}, follow=True)
    assert b"revoked: requests using it are refused from now on" in response.content
    assert b"No active key" in response.content
    key.refresh_from_db()
    assert key.revoked_by == staff
    assert KeyEvent.objects.filter(action="revoke", via="settings", by=staff).exists()
    assert not authenticates(rf, token)


def test_revoking_needs_the_confirmed_key(staff, practice, minted):
    key, _ = minted
    response = signed_in(staff).post(f"{KEY_PAGE}revoke/", {})
    assert response.status_code == 200  # the confirmation page again
    assert active_key(practice) == key


# --- Practices are kept apart ----------------------------------------------------------------


def test_a_member_never_sees_another_practices_key(staff, other_practice):
    other_key, _ = key_mint(practice=other_practice, scopes=SCOPES, via=KeyEvent.Via.COMMAND)
    client = signed_in(staff)
    body = client.get(KEY_PAGE).content.decode()
    assert other_key.prefix not in body
    assert "riverside" not in body.lower()
    assert client.get(f"{KEY_PAGE}?practice=riverside").status_code == 404


@pytest.mark.parametrize("action", ["rotate", "revoke"])
def test_a_member_cannot_change_another_practices_key(staff, other_practice, action):
    other_key, _ = key_mint(practice=other_practice, scopes=SCOPES, via=KeyEvent.Via.COMMAND)
    client = signed_in(staff)
    url = f"{KEY_PAGE}{action}/?practice=riverside"
    assert client.get(url).status_code == 404
    response = client.post(url, {"scopes": list(SCOPES), "key": other_key.prefix})
    assert response.status_code == 404
    assert active_key(other_practice) == other_key


def test_a_member_of_two_practices_switches_between_them(practice, other_practice):
    user = make_member(practice, "pat")
    other_practice.memberships.create(user=user, role="reviewer")
    other_key, _ = key_mint(practice=other_practice, scopes=SCOPES, via=KeyEvent.Via.COMMAND)
    client = signed_in(user)

    first = client.get(KEY_PAGE).content.decode()  # riverside sorts first
    assert "Riverside" in first
    assert 'id="practice-switcher"' in first
    assert other_key.prefix in first

    chosen = client.get(f"{KEY_PAGE}?practice=st-mary").content.decode()
    assert "St Mary&#x27;s" in chosen
    assert other_key.prefix not in chosen
    assert "No active key" in chosen
    # Remembered for the next page without the parameter.
    assert "No active key" in client.get(KEY_PAGE).content.decode()
