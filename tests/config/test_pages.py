"""The front page: what the registry is, and the way in for each kind of visitor."""

from __future__ import annotations

import pytest
from django.test import Client

from registry.models import Membership
from tests.registry.conftest import signed_in
from tests.registry.factories import PracticeFactory, birth, member

pytestmark = pytest.mark.django_db

QUEUE = "/admin/registry/record/?suspected_duplicate__exact=1&amp;voided__exact=0"


def test_a_visitor_reads_what_the_registry_is_and_where_to_sign_in():
    response = Client().get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Birth registry</h1>" in html
    assert "FHIR R4 Bundles" in html
    assert 'href="/accounts/login/"' in html
    assert 'href="/admin/login/?next=/admin/"' in html
    assert 'href="/docs/"' in html and 'href="/openapi.json"' in html
    assert "Open the settings area" not in html


def test_practice_staff_are_led_to_the_settings_area_not_the_review_admin():
    html = signed_in(member(PracticeFactory(), "sam")).get("/").content.decode()
    assert 'href="/settings/">Open the settings area' in html
    assert "Your account does not review any practice." in html
    assert 'href="/admin/"' not in html


def test_a_reviewer_sees_the_review_queue_with_its_size():
    practice = PracticeFactory()
    for flagged in (True, True, False):
        birth(practice, suspected_duplicate=flagged)
    birth(practice, suspected_duplicate=True, voided=True)
    rita = member(practice, "rita", Membership.Role.REVIEWER, is_staff=True)
    html = signed_in(rita).get("/").content.decode()
    assert f'href="{QUEUE}">Review queue (2)</a>' in html


def test_a_signed_in_user_of_no_practice_is_told_what_to_do(django_user_model):
    user = django_user_model.objects.create_user("nobody")
    html = signed_in(user).get("/").content.decode()
    assert "is not a member of any practice yet" in html


def test_the_front_page_answers_head():
    assert Client().head("/").status_code == 200


def test_the_favicon_answers_without_a_not_found_line(caplog):
    with caplog.at_level("INFO"):
        response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert b"<svg" in response.content
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]


@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/admin/login/"])
def test_every_page_names_the_icon(path):
    html = Client().get(path).content.decode()
    assert '<link rel="icon" href="/static/registry/favicon' in html
