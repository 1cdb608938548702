"""The sandbox reset in a real browser, by keyboard only: Debian's Chromium via Playwright."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from ingestion.sandbox.services import sandbox_reset
from registry.models import Membership, Practice, Record
from tests.browser import ARTIFACTS, chromium_page
from tests.registry.factories import birth

PASSWORD = "correct horse battery staple"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def sandbox_staff(transactional_db) -> User:
    sandbox = Practice.objects.create(slug="acme-test", name="Acme EHR (test)", sandbox=True)
    for _ in range(3):
        birth(sandbox)
    user = User.objects.create_user("sam", password=PASSWORD)
    Membership.objects.create(user=user, practice=sandbox, role=Membership.Role.STAFF)
    return user


def press_tab_until_focused(page, name: str, limit: int = 40) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == name:
            return
    pytest.fail(f"Tab never reached {name!r}")


def test_a_staff_member_deletes_all_sandbox_data_with_the_keyboard(
    sandbox_staff, live_server, monkeypatch
):
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_page(live_server.url, monkeypatch) as page:
        page.goto("/settings/key/")
        page.get_by_label("Username").fill("sam")
        page.get_by_label("Password").fill(PASSWORD)
        page.keyboard.press("Enter")
        page.get_by_role("heading", name="API key", exact=True).wait_for()
        banner = page.get_by_role("note")
        assert "Sandbox practice: test data only." in banner.inner_text()
        page.screenshot(path=str(ARTIFACTS / "sandbox-key-page.png"), full_page=True)

        press_tab_until_focused(page, "Delete all sandbox data…")
        page.keyboard.press("Enter")
        page.get_by_role("heading", name="Delete all sandbox data").wait_for()
        assert page.get_by_test_id("sandbox-records").inner_text() == "3"
        page.screenshot(path=str(ARTIFACTS / "sandbox-reset-confirm.png"), full_page=True)

        press_tab_until_focused(page, "Delete all sandbox data")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        page.wait_for_load_state()
        status = page.get_by_role("status")
        assert "All sandbox data deleted: 3 records" in status.inner_text()
        assert page.evaluate("document.activeElement.getAttribute('role')") == "status"
        assert page.get_by_test_id("sandbox-empty").is_visible()
        page.screenshot(path=str(ARTIFACTS / "sandbox-reset-done.png"), full_page=True)
    assert not Record.objects.exists()
    assert sandbox_reset(practice=Practice.objects.get()).nothing
