"""The registry console in Chromium: it fits a phone (the table slides inside its own labelled
region), and a keyboard reaches and follows the sort links. At 1280 px the page is opened by
tests/test_accessibility.py. Screenshots land in tests/artifacts/office/ (git-ignored)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User

from registry.models import SubmissionCount
from registry.silence import utc_today
from tests.browser import ARTIFACTS, chromium_page
from tests.registry.factories import PracticeFactory
from tests.test_accessibility import signed_in_as

pytestmark = pytest.mark.browser

SHOTS = ARTIFACTS / "office"


@pytest.fixture
def practices(transactional_db) -> None:
    today = utc_today()
    for n in range(12):
        practice = PracticeFactory(slug=f"hospital-{n:02d}", name=f"County Hospital {n:02d}")
        # Hospital 00 to 02 sent in five past weeks and nothing since: silent.
        first = 1 if n < 3 else 0
        for week in range(first, first + 5):
            day = today - timedelta(days=7 * week + (3 if n < 3 else 0))
            SubmissionCount.objects.create(
                practice=practice,
                day=day,
                ingestions=1,
                courses=n + week,
                accepted=n + week,
                last_received_at=datetime.combine(day, time(10), tzinfo=UTC),
            )
    User.objects.create_superuser("root")


def test_the_console_fits_a_phone_and_sorts_from_the_keyboard(
    practices, live_server, monkeypatch
) -> None:
    width = 390
    SHOTS.mkdir(parents=True, exist_ok=True)
    page: Any
    with chromium_page(live_server.url, monkeypatch) as page:
        page.set_viewport_size({"width": width, "height": 844 if width < 600 else 900})
        signed_in_as(page, "root", live_server.url)
        page.goto("/registry/")
        region = page.get_by_role("region", name="Practices 1 to 12 of 12, silent first")
        assert region.is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        first = page.locator("tbody tr").first
        assert "Silent" in first.inner_text()
        page.screenshot(path=str(SHOTS / f"console-{width}.png"), full_page=True)
        # Tab to the "Courses, 30 days" sort link and follow it with Enter.
        target = page.get_by_role("link", name="Courses, 30 days")
        for _ in range(40):
            page.keyboard.press("Tab")
            if target.evaluate("e => e === document.activeElement"):
                break
        else:
            pytest.fail("Tab never reached the sort link")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "sort=courses_30" in page.url
        heading = page.locator('th[aria-sort="descending"]')
        assert heading.inner_text().startswith("Courses, 30 days")
        assert page.locator("tbody tr").first.inner_text().startswith("County Hospital 11")
        page.screenshot(path=str(SHOTS / f"console-sorted-{width}.png"), full_page=True)
        # At 1280 px every column shows at once: the table needs no sliding there.
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto("/registry/")
        scroll = page.locator(".console__scroll")
        assert scroll.evaluate("e => e.scrollWidth <= e.clientWidth")
        page.screenshot(path=str(SHOTS / "console-1280.png"), full_page=True)
        assert not page.registry_watcher.problems
