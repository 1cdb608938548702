"""Bearer authentication and the scope permission, through the test-only views in urls.py."""

from __future__ import annotations

import hashlib
import logging
import threading
from datetime import timedelta

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from keys.authentication import ApiKeyAuthentication
from keys.models import INGEST_READ, SCOPES, ApiKey, KeyEvent
from keys.services import key_mint, key_revoke, key_rotate
from registry.models import Practice
from tests.conftest import clear_cached_keys

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.keys.urls")]


def call(client: Client, authorization: str | None, path: str = "/write"):
    headers = {"Authorization": authorization} if authorization is not None else {}
    return client.get(path, headers=headers)


def assert_outcome(response, status: int, code: str) -> dict:
    assert response.status_code == status
    assert response["Content-Type"] == "application/fhir+json"
    body = response.json()
    assert body["resourceType"] == "OperationOutcome"
    assert body["issue"][0]["severity"] == "error"
    assert body["issue"][0]["code"] == code
    return body


def assert_401(response, token: str | None = None) -> dict:
    body = assert_outcome(response, 401, "login")
    assert response["WWW-Authenticate"] == "Bearer"
    if token:
        assert token not in response.content.decode()
    return body


def test_a_valid_key_gets_200_with_its_practice_on_request_auth(client, minted):
    key, token = minted
    response = call(client, f"Bearer {token}")
    assert response.status_code == 200
    assert response.json() == {
        "practice": "st-mary",
        "prefix": key.prefix,
        "user": f"api-key:{key.prefix}",
    }


def test_the_scheme_is_case_insensitive(client, minted):
    _, token = minted
    assert call(client, f"bearer {token}").status_code == 200


def test_a_missing_header_gets_401(client, minted):
    body = assert_401(call(client, None))
    assert "Bearer" in body["issue"][0]["diagnostics"]


def test_an_empty_header_gets_401(client, minted):
    assert_401(call(client, ""))


@pytest.mark.parametrize("scheme", ["Basic", "Token", "ApiKey"])
def test_another_scheme_gets_401(client, minted, scheme):
    _, token = minted
    body = assert_401(call(client, f"{scheme} {token}"), token)
    assert "scheme" in body["issue"][0]["diagnostics"]


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer",
        "Bearer ",
        "Bearer rgk_abc",
        "Bearer rgk_" + "a" * 39,
        "Bearer rgk_" + "a" * 41,
        "Bearer xyz_" + "a" * 40,
        "Bearer rgk_" + "a" * 39 + "-",
        "Bearer rgk_" + "a" * 40 + " extra",
    ],
)
def test_a_malformed_token_gets_401(client, minted, authorization):
    body = assert_401(call(client, authorization))
    assert "Malformed" in body["issue"][0]["diagnostics"]


def test_a_non_ascii_token_gets_401(client, minted):
    response = client.get("/write", HTTP_AUTHORIZATION="Bearer rgk_" + "é" * 40)
    assert_401(response)


def test_an_unknown_token_gets_401(client, minted):
    token = "rgk_" + "Z" * 40
    body = assert_401(call(client, f"Bearer {token}"), token)
    assert body["issue"][0]["diagnostics"] == "Invalid or revoked API key."


def test_the_right_prefix_with_a_wrong_secret_gets_401(client, minted):
    key, token = minted
    forged = token[:-1] + ("a" if token[-1] != "a" else "b")
    assert forged.startswith(key.prefix)
    assert_401(call(client, f"Bearer {forged}"), forged)


def test_a_revoked_key_gets_401(client, minted, practice):
    _, token = minted
    assert call(client, f"Bearer {token}").status_code == 200
    key_revoke(practice=practice, via=KeyEvent.Via.COMMAND)
    assert_401(call(client, f"Bearer {token}"), token)


def test_a_refused_key_is_logged_by_a_fingerprint_not_by_its_prefix(
    client, minted, practice, caplog
):
    """Issue 31: ``refused revoked api key rgk_XXXXXXXX`` handed the prefix to whoever reads
    the logs, enough to aim forged tokens at the key."""
    key, token = minted
    key_revoke(practice=practice, via=KeyEvent.Via.COMMAND)
    caplog.clear()
    caplog.set_level(logging.DEBUG)
    assert_401(call(client, f"Bearer {token}"), token)
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    fingerprint = hashlib.sha256(key.prefix.encode()).hexdigest()[:8]
    assert refused == [f"refused revoked api key {fingerprint}"]
    logged = caplog.text + " ".join(str(record.args) for record in caplog.records)
    assert key.prefix[len("rgk_") :] not in logged


def test_a_rotated_out_key_gets_401_and_its_successor_works(client, minted, practice):
    _, old_token = minted
    assert call(client, f"Bearer {old_token}").status_code == 200
    _, new_token = key_rotate(practice=practice, via=KeyEvent.Via.COMMAND)
    assert_401(call(client, f"Bearer {old_token}"), old_token)
    assert call(client, f"Bearer {new_token}").status_code == 200


def test_a_key_without_the_routes_scope_gets_403_naming_the_scope(client, practice):
    _, token = key_mint(practice=practice, scopes=[INGEST_READ], via=KeyEvent.Via.COMMAND)
    body = assert_outcome(call(client, f"Bearer {token}", "/write"), 403, "forbidden")
    assert "ingest:write" in body["issue"][0]["diagnostics"]
    assert call(client, f"Bearer {token}", "/read").status_code == 200


def test_a_view_without_required_scope_fails_closed(client, minted):
    _, token = minted
    assert_outcome(call(client, f"Bearer {token}", "/unscoped"), 500, "exception")


def test_post_with_a_valid_key_needs_no_csrf_token(minted):
    _, token = minted
    client = Client(enforce_csrf_checks=True)
    response = client.post("/write", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200


def test_use_is_recorded_at_most_once_a_minute(client, minted):
    key, token = minted
    assert key.last_used_at is None
    call(client, f"Bearer {token}")
    key.refresh_from_db()
    first_use = key.last_used_at
    assert first_use is not None
    call(client, f"Bearer {token}")
    key.refresh_from_db()
    assert key.last_used_at == first_use

    a_minute_later(key)
    call(client, f"Bearer {token}")
    key.refresh_from_db()
    assert key.last_used_at > first_use


def a_minute_later(key: ApiKey) -> None:
    """As if a minute had passed: the use noted in the database and in Redis (the cached key,
    the once-a-minute mark) both older than that."""
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now() - timedelta(minutes=2))
    clear_cached_keys()


def test_a_key_costs_one_query_when_not_cached_and_none_while_cached(rf, minted):
    key, token = minted
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    request = rf.get("/write", HTTP_AUTHORIZATION=f"Bearer {token}")
    with CaptureQueriesContext(connection) as queries:
        principal, auth = ApiKeyAuthentication().authenticate(request)
    assert len(queries) == 1  # the lookup, which also loads the practice
    assert auth.practice.slug == "st-mary"
    assert principal.practice == auth.practice

    with CaptureQueriesContext(connection) as queries:
        principal, auth = ApiKeyAuthentication().authenticate(request)
    assert len(queries) == 0  # from the cache in Redis, practice included
    assert auth.practice.slug == "st-mary"
    assert auth.scopes == list(SCOPES)

    a_minute_later(key)
    with CaptureQueriesContext(connection) as queries:
        ApiKeyAuthentication().authenticate(request)
    assert len(queries) == 2
    assert queries[1]["sql"].startswith("UPDATE")


def test_without_the_cache_every_request_reads_the_key(rf, minted, settings):
    settings.REGISTRY_KEY_CACHE_SECONDS = 0
    key, token = minted
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    request = rf.get("/write", HTTP_AUTHORIZATION=f"Bearer {token}")
    for _ in range(2):
        with CaptureQueriesContext(connection) as queries:
            ApiKeyAuthentication().authenticate(request)
        assert len(queries) == 1


def test_a_request_that_read_the_key_before_its_revocation_cannot_cache_it(client, minted):
    """The race a cache invites: a lookup reads the key (active), the key is revoked, then
    the lookup fills the cache. The revocation's tombstone wins."""
    from keys.cache import _fill

    key, token = minted
    read_before = ApiKey.objects.select_related("practice").get(pk=key.pk)
    key_revoke(practice=key.practice, via=KeyEvent.Via.COMMAND)
    _fill(caches["default"]._cache.get_client(write=True), read_before)
    assert_401(call(client, f"Bearer {token}"), token)


@pytest.mark.django_db(transaction=True)
def test_a_revocation_made_elsewhere_holds_from_the_next_request(client):
    """Another process revoking (here: another thread, with its own connection) is seen at once."""
    practice = Practice.objects.create(slug="elsewhere")
    _, token = key_mint(practice=practice, scopes=SCOPES, via=KeyEvent.Via.COMMAND)
    assert call(client, f"Bearer {token}").status_code == 200

    def revoke_elsewhere() -> None:
        try:
            key_revoke(practice=practice, via=KeyEvent.Via.ADMIN)
        finally:
            connection.close()

    worker = threading.Thread(target=revoke_elsewhere)
    worker.start()
    worker.join()
    assert_401(call(client, f"Bearer {token}"), token)
