"""The settings key page in a real browser: Debian's Chromium driven by Playwright."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User

from registry.models import Membership, Practice
from tests.browser import ARTIFACTS, chromium_page

PASSWORD = "correct horse battery staple"
TOKEN = re.compile(r"rgk_[0-9A-Za-z]{40}")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.urls("tests.keys.browser_urls"),
]


@pytest.fixture
def staff_member(transactional_db) -> User:
    practice = Practice.objects.create(slug="st-mary", name="St Mary's")
    user = User.objects.create_user("sam", password=PASSWORD)
    Membership.objects.create(user=user, practice=practice, role=Membership.Role.STAFF)
    return user


@pytest.fixture
def browser_page(staff_member, live_server, monkeypatch) -> Iterator:
    with chromium_page(live_server.url, monkeypatch, clipboard=True) as page:
        yield page


def probe(page, token: str) -> int:
    """Status of the test-only ingest:write view for this token."""
    response = page.request.get("/probe/write", headers={"Authorization": f"Bearer {token}"})
    return response.status


def shown_token(page) -> str:
    token = page.get_by_label("API key").input_value()
    assert TOKEN.fullmatch(token)
    return token


def test_a_staff_member_mints_rotates_and_revokes_the_key_in_a_browser(browser_page):
    page = browser_page
    ARTIFACTS.mkdir(exist_ok=True)

    # Sign in: the key page sends a visitor to the login form and back.
    page.goto("/settings/key/")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="API key", exact=True).wait_for()
    assert page.get_by_role("heading", name="No active key").is_visible()

    # Mint, choosing scopes, after a confirmation step.
    page.get_by_role("link", name="Mint a key…").click()
    page.get_by_label("ingest:read: read ingestion receipts").uncheck()
    assert page.get_by_label("ingest:write: submit Bundles").is_checked()
    page.screenshot(path=str(ARTIFACTS / "settings-key-mint.png"), full_page=True)
    with page.expect_response(lambda r: r.request.method == "POST") as minted:
        page.get_by_role("button", name="Mint key").click()
    assert "no-store" in minted.value.headers["cache-control"]
    page.wait_for_load_state()  # the copy buttons work once their (deferred) script has run
    assert page.get_by_text("cannot be shown again").is_visible()
    token = shown_token(page)
    page.get_by_role("button", name="Copy", exact=True).click()
    page.get_by_text("Copied to the clipboard.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == token
    page.get_by_role("button", name="Copy header").click()
    page.get_by_role("button", name="Copied").nth(1).wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == f"Authorization: Bearer {token}"
    page.screenshot(path=str(ARTIFACTS / "settings-key-token.png"), full_page=True)

    assert probe(page, token) == 200

    # Back on the key page: the prefix and the scope, never the token.
    page.get_by_role("link", name=re.compile("back to the key")).click()
    assert page.get_by_test_id("key-prefix").inner_text() == f"{token[:12]}…"
    assert "ingest:write" in page.content()
    assert token not in page.content()
    page.screenshot(path=str(ARTIFACTS / "settings-key.png"), full_page=True)

    # Rotate, with confirmation: the old token is refused at once, the new one works.
    page.get_by_role("link", name="Rotate key…").click()
    assert page.get_by_text("Rotating revokes").is_visible()
    page.get_by_role("button", name="Rotate key").click()
    rotated = shown_token(page)
    assert rotated != token
    assert probe(page, token) == 401
    assert probe(page, rotated) == 200

    # Revoke, with confirmation.
    page.get_by_role("link", name=re.compile("back to the key")).click()
    page.get_by_role("link", name="Revoke key…").click()
    assert page.get_by_text("cannot be undone").is_visible()
    page.get_by_role("button", name="Revoke key").click()
    page.get_by_text("requests using it are refused from now on").wait_for()
    assert page.get_by_role("heading", name="No active key").is_visible()
    assert probe(page, rotated) == 401
    page.screenshot(path=str(ARTIFACTS / "settings-key-revoked.png"), full_page=True)

    # Sign out is a POST from the header.
    page.get_by_role("button", name="Sign out").click()
    page.goto("/settings/key/")
    assert "/accounts/login/" in page.url
