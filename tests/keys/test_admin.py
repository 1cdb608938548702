"""Keys in the Django admin: actions with a confirmation page, token shown once."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from keys.models import INGEST_READ, SCOPES, ApiKey, KeyEvent

pytestmark = pytest.mark.django_db

PRACTICES = "/admin/registry/practice/"
KEYS = "/admin/keys/apikey/"
EVENTS = "/admin/keys/keyevent/"
TOKEN_IN_PAGE = re.compile(r'value="(rgk_[0-9A-Za-z]{40})"')


@pytest.fixture
def key_admin(db) -> User:
    """A staff user (not a superuser) allowed to manage keys."""
    user = User.objects.create_user("kim", is_staff=True)
    codenames = ["change_apikey", "view_apikey", "view_keyevent", "view_practice"]
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def action(client: Client, url: str, name: str, selected, **extra):
    data = {"action": name, "_selected_action": [obj.pk for obj in selected], **extra}
    return client.post(url, data)


def tokens_in(response) -> list[str]:
    return TOKEN_IN_PAGE.findall(response.content.decode())


def test_minting_from_the_admin_confirms_then_shows_the_token_once(key_admin, practice):
    client = signed_in(key_admin)
    confirm = action(client, PRACTICES, "mint_key", [practice])
    assert confirm.status_code == 200
    assert b"shown <strong>once</strong>" in confirm.content
    assert b'name="scopes"' in confirm.content
    assert not ApiKey.objects.exists()

    response = action(
        client, PRACTICES, "mint_key", [practice], confirmed="yes", scopes=[INGEST_READ]
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert b"only time it is shown" in response.content
    [token] = tokens_in(response)
    key = ApiKey.objects.get()
    assert key.matches(token)
    assert key.scopes == [INGEST_READ]
    assert key.created_by == key_admin
    event = KeyEvent.objects.get()
    assert (event.action, event.via, event.by) == ("mint", "admin", key_admin)
    # Never again: not in the key's own page, nor in the next page's messages.
    assert token not in client.get(f"{KEYS}{key.pk}/change/").content.decode()
    assert token not in client.get(PRACTICES).content.decode()


def test_minting_from_the_admin_needs_a_scope(key_admin, practice):
    response = action(signed_in(key_admin), PRACTICES, "mint_key", [practice], confirmed="yes")
    assert response.status_code == 200
    assert b"Choose at least one scope." in response.content
    assert not ApiKey.objects.exists()


def test_minting_from_the_admin_skips_a_practice_with_an_active_key(
    key_admin, practice, other_practice, minted
):
    client = signed_in(key_admin)
    response = action(
        client,
        PRACTICES,
        "mint_key",
        [practice, other_practice],
        confirmed="yes",
        scopes=list(SCOPES),
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "st-mary already has an active key" in body
    assert len(tokens_in(response)) == 1
    assert ApiKey.objects.filter(practice=other_practice).count() == 1
    assert ApiKey.objects.filter(practice=practice).count() == 1


def test_rotating_from_the_admin_revokes_the_old_key_and_shows_the_new_token(
    key_admin, practice, minted
):
    old, _ = minted
    client = signed_in(key_admin)
    confirm = action(client, PRACTICES, "rotate_key", [practice])
    assert f"active key <code>{old.prefix}…</code>".encode() in confirm.content
    assert ApiKey.objects.count() == 1

    response = action(
        client,
        PRACTICES,
        "rotate_key",
        [practice],
        confirmed="yes",
        **{f"expected-{practice.pk}": old.prefix},
    )
    [token] = tokens_in(response)
    assert "no-store" in response["Cache-Control"]
    new = ApiKey.objects.get(revoked_at__isnull=True)
    assert new.matches(token)
    assert new.scopes == old.scopes
    old.refresh_from_db()
    assert old.revoked_by == key_admin
    event = KeyEvent.objects.order_by("-id").first()
    assert (event.action, event.via, event.previous_prefix) == ("rotate", "admin", old.prefix)


def test_rotating_a_key_that_changed_since_the_confirmation_does_nothing(
    key_admin, practice, minted
):
    key, _ = minted
    response = action(
        signed_in(key_admin),
        PRACTICES,
        "rotate_key",
        [practice],
        confirmed="yes",
        **{f"expected-{practice.pk}": "rgk_00000000"},
    )
    assert response.status_code == 302
    assert ApiKey.objects.get(revoked_at__isnull=True) == key


def test_revoking_from_the_admin_confirms_then_revokes(key_admin, practice, minted):
    key, _ = minted
    client = signed_in(key_admin)
    confirm = action(client, PRACTICES, "revoke_key", [practice])
    assert b"cannot be undone" in confirm.content
    key.refresh_from_db()
    assert key.is_active

    response = action(client, PRACTICES, "revoke_key", [practice], confirmed="yes")
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.revoked_by == key_admin
    follow = client.get(response["Location"])
    assert f"Revoked {key.prefix}… of st-mary".encode() in follow.content


def test_keys_can_be_rotated_and_revoked_from_the_key_list(key_admin, practice, minted):
    key, _ = minted
    client = signed_in(key_admin)
    response = action(client, KEYS, "rotate_key", [key], confirmed="yes")
    [token] = tokens_in(response)
    new = ApiKey.objects.get(revoked_at__isnull=True)
    assert new.matches(token)

    action(client, KEYS, "revoke_key", [new], confirmed="yes")
    assert not ApiKey.objects.filter(revoked_at__isnull=True).exists()


def test_a_revoked_key_in_the_list_is_not_rotated(key_admin, practice, minted):
    key, _ = minted
    client = signed_in(key_admin)
    action(client, KEYS, "revoke_key", [key], confirmed="yes")
    confirm = action(client, KEYS, "rotate_key", [key])
    assert b"has an active key" in confirm.content
    response = action(client, KEYS, "rotate_key", [key], confirmed="yes")
    assert response.status_code == 302
    assert not ApiKey.objects.filter(revoked_at__isnull=True).exists()


def test_staff_without_the_permission_get_no_key_actions(practice, minted):
    viewer = User.objects.create_user("val", is_staff=True)
    viewer.user_permissions.set(
        Permission.objects.filter(codename__in=["view_practice", "view_apikey"])
    )
    client = signed_in(viewer)
    assert b"mint_key" not in client.get(PRACTICES).content
    action(client, PRACTICES, "revoke_key", [practice], confirmed="yes")
    key, _ = minted
    key.refresh_from_db()
    assert key.is_active


def test_keys_and_their_history_are_read_only_in_the_admin(admin_client, practice, minted):
    key, _ = minted
    page = admin_client.get(f"{KEYS}{key.pk}/change/")
    assert page.status_code == 200
    assert key.prefix.encode() in page.content
    assert key.digest.encode() not in page.content
    assert b'name="_save"' not in page.content
    assert admin_client.get(f"{KEYS}add/").status_code == 403
    assert admin_client.get(f"{EVENTS}add/").status_code == 403
    assert admin_client.post(f"{KEYS}{key.pk}/delete/").status_code == 403


def test_the_history_is_listed_in_the_admin(admin_client, practice, minted):
    key, _ = minted
    listing = admin_client.get(EVENTS)
    assert listing.status_code == 200
    assert key.prefix.encode() in listing.content
    assert b"Management command" in listing.content


def test_a_practice_page_shows_its_keys_and_history(admin_client, practice, minted):
    key, _ = minted
    page = admin_client.get(f"{PRACTICES}{practice.pk}/change/")
    assert page.status_code == 200
    assert b"Key history" in page.content
    assert key.prefix.encode() in page.content


def test_the_admin_lists_members(admin_client, staff):
    assert b"sam" in admin_client.get("/admin/registry/membership/").content


def test_superusers_can_mint_from_the_admin(admin_client, practice):
    response = action(
        admin_client, PRACTICES, "mint_key", [practice], confirmed="yes", scopes=list(SCOPES)
    )
    [token] = tokens_in(response)
    assert ApiKey.objects.get().matches(token)
