"""The password pages in the settings look, the practice chooser, and HEAD on settings pages."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from keys.models import ApiKey
from tests.registry.conftest import signed_in
from tests.registry.factories import PASSWORD, birth

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a much longer passphrase 42"


def test_password_change_is_in_the_settings_look(staff):
    response = signed_in(staff).get("/settings/password/")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<div class="settings">' in html and "<h1>Change your password</h1>" in html
    assert 'aria-current="page">Password' in html
    assert "Django administration" not in html


def test_changing_the_password_keeps_you_signed_in_and_says_so(staff):
    client = signed_in(staff)
    response = client.post(
        "/settings/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/settings/password/done/"
    assert "Your password was changed." in response.content.decode()
    staff.refresh_from_db()
    assert staff.check_password(NEW_PASSWORD)
    assert client.get("/settings/key/").status_code == 200


def test_a_wrong_old_password_is_refused_in_the_settings_look(staff):
    response = signed_in(staff).post(
        "/settings/password/",
        {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 200
    assert "Your old password was entered incorrectly" in response.content.decode()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("/accounts/password_change/", "/settings/password/"),
        ("/accounts/password_change/done/", "/settings/password/done/"),
        ("/admin/password_change/", "/settings/password/"),
    ],
)
def test_the_old_password_addresses_lead_to_the_settings_area(reviewer, old, new):
    response = signed_in(reviewer).get(old)
    assert response.status_code in (301, 302)
    assert response["Location"] == new


def test_a_user_of_no_practice_can_still_change_their_password(django_user_model):
    user = django_user_model.objects.create_user("nobody", password=PASSWORD)
    response = signed_in(user).get("/settings/password/")
    assert response.status_code == 200
    assert "Practice" not in response.content.decode().split('<div class="settings__main">')[0]


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/settings/key/",
        "/settings/key/mint/",
        "/settings/statistics/",
        "/settings/statistics.json",
        "/settings/statistics.csv",
        "/settings/password/",
        "/settings/practices/",
    ],
)
def test_settings_pages_answer_head(staff, path):
    response = signed_in(staff).head(path)
    assert response.status_code == 200
    assert response.content == b""


# --- A superuser chooses among all practices --------------------------------------------------


@pytest.fixture
def practices(st_mary, riverside):
    birth(riverside)
    birth(riverside)
    return st_mary, riverside


def test_a_superuser_of_no_practice_is_asked_to_choose_one(practices, superuser):
    client = signed_in(superuser)
    response = client.get("/settings/statistics/")
    assert response.status_code == 302
    assert response["Location"] == "/settings/practices/?next=%2Fsettings%2Fstatistics%2F"
    html = client.get(response["Location"]).content.decode()
    assert 'href="/settings/statistics/?practice=riverside"' in html
    assert 'href="/settings/statistics/?practice=st-mary"' in html
    assert "manage.py addmember" not in html


def test_a_superuser_sees_the_chosen_practice_as_its_staff_would(practices, superuser):
    client = signed_in(superuser)
    response = client.get("/settings/statistics/?practice=riverside")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-testid="figure-births">2<' in html
    assert '<span class="muted">Superuser</span>' in html
    assert "Choose another practice" in html
    # Remembered: the key page is Riverside's too, and the superuser manages its key.
    html = client.get("/settings/key/").content.decode()
    assert "Mint a key…" in html
    client.post("/settings/key/mint/", {"scopes": ["ingest:write"]})
    assert ApiKey.objects.get().practice.slug == "riverside"


def test_a_superuser_searches_the_practices(practices, superuser):
    html = signed_in(superuser).get("/settings/practices/?q=river").content.decode()
    assert "?practice=riverside" in html and "?practice=st-mary" not in html


def test_the_chooser_leads_only_to_settings_pages(practices, superuser):
    html = signed_in(superuser).get("/settings/practices/?next=https://evil.example/").content
    assert b"evil" not in html
    assert b'href="/settings/key/?practice=riverside"' in html


def test_an_unknown_practice_is_404_for_a_superuser_too(practices, superuser):
    assert signed_in(superuser).get("/settings/key/?practice=nope").status_code == 404


def test_a_member_chooses_only_among_their_practices(practices, staff):
    html = signed_in(staff).get("/settings/practices/").content.decode()
    assert "?practice=st-mary" in html and "riverside" not in html


def test_a_superuser_of_no_practice_is_asked_to_choose_in_json_too(practices, superuser):
    response = signed_in(superuser).get("/settings/statistics.json")
    assert response.status_code == 400
    assert "practice" in response.json()["error"]


def test_a_visitor_is_asked_to_sign_in_for_the_chooser():
    response = Client().get("/settings/practices/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_user_with_no_practice_is_not_told_to_run_a_command(django_user_model):
    user: User = django_user_model.objects.create_user("nobody")
    response = signed_in(user).get("/settings/key/")
    assert response.status_code == 403
    html = response.content.decode()
    assert "manage.py" not in html and "Ask the registry's administrator" in html
