"""The web side's error pages: the site's look, what happened and where to go, nothing more."""

from __future__ import annotations

import pytest
from django.test import Client

from keys.models import ApiKey
from registry.models import Membership
from tests.config.error_urls import SECRET
from tests.registry.conftest import signed_in
from tests.registry.factories import PracticeFactory, member

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.config.error_urls")]

SITE_LOOK = '<header class="site-header">'


def assert_error_page(response, status: int, title: str) -> str:
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert SITE_LOOK in html
    assert f"<h1>{title}</h1>" in html
    assert "Where to go from here" in html and 'href="/"' in html
    for leak in ("Traceback", "File &quot;", 'File "', SECRET, "django", "Django"):
        assert leak not in html
    return html


@pytest.fixture
def staff(db):
    return member(PracticeFactory(slug="st-mary", name="St Mary's"), "sam")


@pytest.fixture
def reviewer(db):
    practice = PracticeFactory(slug="st-mary", name="St Mary's")
    return member(practice, "rita", Membership.Role.REVIEWER, is_staff=True)


def test_an_unknown_page_is_a_404_in_the_site_look():
    html = assert_error_page(Client().get("/no-such-page/?q=secret-value"), 404, "Page not found")
    assert "no-such-page" not in html and "secret-value" not in html
    assert 'href="/accounts/login/"' in html  # a visitor is offered the way in


def test_a_practice_that_is_not_yours_is_a_404_that_does_not_echo_it(staff):
    response = signed_in(staff).get("/settings/key/?practice=nope")
    html = assert_error_page(response, 404, "Page not found")
    assert "nope" not in html
    assert 'href="/settings/"' in html  # back to the settings area


def test_a_reviewer_changing_the_key_gets_a_403_that_says_why(reviewer):
    response = signed_in(reviewer).get("/settings/key/rotate/")
    html = assert_error_page(response, 403, "Not allowed")
    assert "Only staff members of the practice manage its key." in html
    assert 'href="/admin/"' in html  # a reviewer is pointed at the review admin


def test_a_refused_csrf_token_is_a_403_page_that_explains_it(staff):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    response = client.post("/settings/key/mint/", {"scopes": ["ingest:write"]})
    html = assert_error_page(response, 403, "Form expired")
    assert "This form has expired. Reload the page and send it again." in html
    assert "Your account may not open this page" not in html
    assert not ApiKey.objects.exists()


def test_a_suspicious_request_is_a_400_page():
    assert_error_page(Client().get("/suspicious/"), 400, "Bad request")


def test_a_request_for_an_unknown_host_is_a_400_page():
    response = Client().get("/", HTTP_HOST="registry.evil.example")
    html = assert_error_page(response, 400, "Bad request")
    assert "evil" not in html


def test_a_crash_is_a_500_page_without_stack_trace_or_data(staff):
    client = signed_in(staff)
    client.raise_request_exception = False
    html = assert_error_page(client.get("/boom/"), 500, "Something went wrong")
    assert "sam" not in html  # drawn without the request: not even who is signed in


def test_the_api_keeps_its_operation_outcomes():
    client = Client(raise_request_exception=False)
    response = client.get("/api/registry/fhir/boom")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/fhir+json"
    body = response.json()
    assert body["resourceType"] == "OperationOutcome"
    assert body["issue"][0]["code"] == "exception"
    assert SECRET not in response.content.decode()
    missing = client.get("/api/registry/fhir/Nothing/here")
    assert missing.status_code == 404
    assert missing.json()["resourceType"] == "OperationOutcome"
