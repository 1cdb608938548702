"""The whole onboarding as people do it, on the real stack: Chromium on a live server,
PostgreSQL, a real SMTP server (aiosmtpd) for the invitations, Redis and a real Celery worker
for the first Bundle.

The registry office adds a hospital and invites its first staff member; she accepts from the
mail, mints a key, and her integration's first Bundle is ingested. She then invites a
reviewer, who accepts; she makes him staff, and removes him.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User

from registry.office import office_permission
from tests.browser import ARTIFACTS, chromium_page
from tests.factories import batch, course
from tests.ingestion.conftest import SUBMIT_URL
from tests.registry.factories import PASSWORD
from tests.registry.test_password_reset_mail import Inbox, smtp_server
from tests.workers import celery_worker, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker]

NEW_PASSWORD = "a much longer passphrase 42"
SHOTS = ARTIFACTS / "onboarding"
LINK = re.compile(r"http://\S+/accounts/invitation/[\w-]+/")


@pytest.fixture
def office(transactional_db, settings) -> User:
    """Olga of the registry office. Written before the browser's event loop starts."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    olga = User.objects.create_user("olga", email="olga@registry.example.org", password=PASSWORD)
    olga.user_permissions.add(office_permission())
    return olga


@pytest.fixture
def stack(office, settings, tmp_path, live_server) -> Iterator[Inbox]:
    """Mail from this process (the live server) to a real SMTP server, and a worker. The
    mailed links name the site by REGISTRY_PUBLIC_URL, here the live server's address."""
    with smtp_server() as (inbox, port), celery_worker(tmp_path, "onboarding"):
        settings.REGISTRY_PUBLIC_URL = live_server.url
        settings.REGISTRY_PASSWORD_RESET = True
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        settings.DEFAULT_FROM_EMAIL = "registry@example.org"
        yield inbox


@pytest.fixture
def browser(live_server, monkeypatch) -> Iterator[Any]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(live_server.url, monkeypatch) as page:
        yield page


def link_mailed_to(inbox: Inbox, address: str) -> str:
    def arrived() -> str | None:
        for message in inbox.messages:
            if message["To"] == address:
                [link] = LINK.findall(message.get_content())
                return link
        return None

    return wait_for(arrived, timeout=30, message=f"the invitation to {address}")


def sign_in(page: Any, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def sign_out(page: Any) -> None:
    page.get_by_role("button", name="Sign out").click()


def accept(page: Any, link: str, first: str, last: str) -> None:
    page.goto(link)
    page.get_by_label("First name").fill(first)
    page.get_by_label("Last name").fill(last)
    page.get_by_label("Password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("Password again").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Accept and sign in").click()


def send_bundle(base_url: str, token: str) -> dict[str, Any]:
    """The integration's first Bundle, over HTTP; its receipt once the worker is done."""
    body = json.dumps(batch(course("LAKE-0001"))).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"}
    request = urllib.request.Request(base_url + SUBMIT_URL, body, headers, method="POST")
    with urllib.request.urlopen(request) as answer:
        assert answer.status == 202
        receipt_url = answer.headers["Content-Location"]

    def finished() -> dict[str, Any] | None:
        read = urllib.request.Request(receipt_url, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(read) as answer:
            receipt = json.loads(answer.read())
        return receipt if receipt["status"] == "completed" else None

    return wait_for(finished, timeout=60, interval=0.2, message="the Bundle to be ingested")


def test_a_hospital_is_onboarded_and_sends_its_first_bundle(stack, browser, live_server):
    page, inbox = browser, stack
    sign_in(page, "olga", PASSWORD)
    page.goto("/settings/practices/")
    page.get_by_role("link", name="Add a practice…").click()
    page.get_by_label("Name").fill("Lakeside Hospital")
    page.get_by_label("Code").fill("lakeside")
    page.get_by_label("Real: its records count in the registry").check()
    page.get_by_label("First staff member's email address").fill("lu@example.org")
    page.get_by_role("button", name="Add the practice and invite").click()
    assert "Invitation sent to lu@example.org" in page.content()
    assert "/accounts/invitation/" not in page.content()  # mailed, so not shown
    sign_out(page)

    accept(page, link_mailed_to(inbox, "lu@example.org"), "Lu", "Moreno")
    assert "Welcome to Lakeside Hospital. Next: mint an API key" in page.content()
    page.screenshot(path=str(SHOTS / "landed.png"), full_page=True)
    page.get_by_role("link", name="Mint a key…").click()
    page.get_by_role("button", name="Mint key").click()
    token = page.locator("#token").input_value()
    assert token.startswith("rgk_")
    receipt = send_bundle(live_server.url, token)
    assert (receipt["accepted"], receipt["rejected"]) == (1, 0)

    page.get_by_role("link", name="Members").click()
    page.get_by_label("Email address").fill("rae@example.org")
    page.get_by_label("Role", exact=True).select_option("reviewer")
    page.get_by_role("button", name="Send invitation").click()
    assert "Invitation sent to rae@example.org" in page.content()
    rae_link = link_mailed_to(inbox, "rae@example.org")
    sign_out(page)
    accept(page, rae_link, "Rae", "Singh")
    assert "Welcome to Lakeside Hospital" in page.content()
    sign_out(page)

    sign_in(page, "lu@example.org", NEW_PASSWORD)
    page.goto("/settings/members/?practice=lakeside")
    page.get_by_label("Role of rae@example.org").select_option("staff")
    page.get_by_role("button", name="Change role").first.click()
    assert "rae@example.org is now staff." in page.content()
    page.get_by_role("button", name="Remove rae@example.org").click()
    assert "rae@example.org is no longer a member." in page.content()
    page.screenshot(path=str(SHOTS / "members.png"), full_page=True)
    history = page.get_by_role("table", name="Recent changes to the members, newest first")
    assert history.get_by_text("Removed").count() == 1
    assert history.get_by_text("Role changed (staff)").count() == 1
    assert history.get_by_text("Joined (reviewer)").count() == 1
    # Used links are spent.
    page.goto(rae_link)
    assert "Invitation not valid" in page.content()
