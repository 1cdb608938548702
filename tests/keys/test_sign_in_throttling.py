"""Sign-in throttling (django-axes) and the per-address limit on failed API authentication."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from tests.factories import course
from tests.ingestion.conftest import Api, mint

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"


@pytest.fixture
def member(db):
    return User.objects.create_user("sam", password=PASSWORD)


@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", password=PASSWORD)


def sign_in(client: Client, url: str, username: str, password: str):
    return client.post(url, {"username": username, "password": password})


@pytest.mark.parametrize(
    ("url", "user"), [("/accounts/login/", "member"), ("/admin/login/", "superuser")]
)
def test_repeated_wrong_passwords_lock_the_account_out(url, user, request, settings):
    account = request.getfixturevalue(user)
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, url, account.username, "wrong").status_code == 200
    assert sign_in(client, url, account.username, "wrong").status_code == 429  # the limit
    locked = sign_in(client, url, account.username, PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.content.decode()
    assert "_auth_user_id" not in client.session

    call_command("axes_reset_username", account.username)
    call_command("axes_reset_ip", "127.0.0.1")
    assert sign_in(Client(), url, account.username, PASSWORD).status_code == 302


def test_failures_from_one_address_lock_it_out_for_every_username(member, settings):
    for i in range(settings.AXES_FAILURE_LIMIT):
        sign_in(Client(), "/accounts/login/", f"nobody-{i}", "wrong")
    assert sign_in(Client(), "/accounts/login/", "sam", PASSWORD).status_code == 429


def test_a_right_password_under_the_limit_signs_in(member):
    client = Client()
    sign_in(client, "/accounts/login/", "sam", "wrong")
    assert sign_in(client, "/accounts/login/", "sam", PASSWORD).status_code == 302


def test_a_flood_of_bad_tokens_from_one_address_is_throttled(practice, client, settings):
    settings.REGISTRY_AUTH_FAILURE_RATE = "5/m"
    api = Api(client, mint(practice), practice)
    for _ in range(5):
        assert api.submit(course("C-1"), token="rgk_bogus_token_value").status_code == 401
    refused = api.submit(course("C-1"), token="rgk_bogus_token_value")
    assert refused.status_code == 429
    assert refused.json()["issue"][0]["code"] == "throttled"
    assert int(refused["Retry-After"]) > 0
    # The address is held off whatever it sends, until the minute is over ...
    assert api.submit(course("C-1")).status_code == 429
    # ... and other addresses are not.
    other = Client(REMOTE_ADDR="10.0.0.9")
    assert Api(other, api.token, practice).submit(course("C-1")).status_code == 202
