"""The review flow with a keyboard alone, in Debian's Chromium (tests/browser.py).

A reviewer signs in, reaches the review queue, opens a record, keeps one and voids another,
pressing only Tab, Shift+Tab, Enter and Space. After each decision the page that follows the
redirect announces it in a status region, and the focus is on that region: a screen reader
reads the result at once, and the keyboard goes on from there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from registry.models import Membership, Record
from tests.browser import ARTIFACTS, chromium_page
from tests.registry.factories import PASSWORD, PracticeFactory, birth, member

pytestmark = [pytest.mark.browser]

MAX_TABS = 80  # more stops than any admin page has before what the test looks for


@pytest.fixture
def flagged(transactional_db) -> list[Record]:
    practice = PracticeFactory(slug="st-mary", name="St Mary's Birth Centre")
    member(practice, "rita", Membership.Role.REVIEWER, is_staff=True)
    records = []
    for letter in "ab":
        birth(practice, external_record_id=f"CHART-{letter}1", fingerprint=letter * 64)
        records.append(
            birth(
                practice,
                external_record_id=f"CHART-{letter}2",
                fingerprint=letter * 64,
                suspected_duplicate=True,
            )
        )
    return records


@pytest.fixture
def page(flagged, live_server, monkeypatch) -> Iterator[Any]:
    with chromium_page(live_server.url, monkeypatch) as page:
        yield page


def tab_to(page: Any, name: str, *, role: str = "link", key: str = "Tab") -> None:
    """Tab until the focus is on the element of ``role`` named ``name``; fail if it never is."""
    visited = []
    for _ in range(MAX_TABS):
        page.keyboard.press(key)
        focused_role, focused_name = page.evaluate(FOCUSED)
        if focused_role == role and name in focused_name:
            return
        visited.append(f"{focused_role} {focused_name!r}")
    pytest.fail(f"{key} never reached the {role} {name!r} on {page.url}: {visited[:30]}")


FOCUSED = """() => {
  const e = document.activeElement;
  const buttons = ["submit", "button"];
  const implicit = e.tagName === "A" ? "link"
    : e.tagName === "BUTTON" || (e.tagName === "INPUT" && buttons.includes(e.type)) ? "button"
    : e.tagName === "TEXTAREA" || e.tagName === "INPUT" ? "textbox" : "";
  const name = e.tagName === "INPUT" && buttons.includes(e.type) ? e.value : e.innerText;
  return [e.getAttribute("role") || implicit, (name || "").trim()];
}"""


def follow(page: Any, key: str) -> None:
    """Press ``key`` on the focused link or button and wait for the page it leads to."""
    with page.expect_navigation():
        page.keyboard.press(key)


def type_in(page: Any, text: str) -> None:
    page.keyboard.type(text)


def assert_focus_shows(page: Any) -> None:
    """The focused element wears the site's ring: a white ring inside an ink one (and an outline
    for forced colours)."""
    ring = page.evaluate(
        "() => { const s = getComputedStyle(document.activeElement);"
        " return [s.outlineStyle, parseFloat(s.outlineWidth), s.boxShadow]; }"
    )
    style, width, shadow = ring
    assert style == "solid" and width >= 3, ring
    assert "rgb(255, 255, 255)" in shadow and "rgb(29, 36, 48)" in shadow, ring  # #fff, #1d2430


def announced(page: Any) -> dict[str, str]:
    """The focused element: its role, its live setting and its text."""
    return page.evaluate(
        "() => { const e = document.activeElement;"
        " return {role: e.getAttribute('role') || '', id: e.id,"
        " live: e.getAttribute('aria-live') || '', text: e.innerText.trim()}; }"
    )


def decide(page: Any, record: str, choice: str, confirm: str, note: str) -> dict[str, str]:
    """From the admin's home page: queue, record, decision, note, confirmation."""
    tab_to(page, "Review queue")
    follow(page, "Enter")
    tab_to(page, record)
    follow(page, "Enter")
    tab_to(page, choice)
    follow(page, "Enter")
    tab_to(page, "", role="textbox")  # the note
    type_in(page, note)
    tab_to(page, confirm, role="button")
    assert_focus_shows(page)
    page.screenshot(path=str(ARTIFACTS / f"admin-focus-{confirm.split()[-2]}-button.png"))
    follow(page, "Space")
    page.locator("#admin-messages").wait_for()
    assert_focus_shows(page)
    page.screenshot(path=str(ARTIFACTS / f"admin-focus-{confirm.split()[-2]}-announced.png"))
    return announced(page)


def test_a_reviewer_keeps_and_voids_with_the_keyboard_alone(page, flagged):
    page.goto("/admin/login/?next=/admin/")
    assert page.evaluate("document.activeElement.name") == "username"  # autofocus
    type_in(page, "rita")
    page.keyboard.press("Tab")
    type_in(page, PASSWORD)
    follow(page, "Enter")
    assert page.url.endswith("/admin/") and "login" not in page.url

    kept = decide(page, "CHART-a2", "Keep: not a duplicate", "Yes, keep it", "Twins.")
    assert kept["id"] == "admin-messages" and kept["role"] == "status"
    assert kept["text"] == "Record CHART-a2 kept: no longer flagged as a suspected duplicate."

    # From the announcement, back up to the breadcrumbs' list of records, which leads on to
    # the review queue as the home page did.
    tab_to(page, "Records", key="Shift+Tab")
    follow(page, "Enter")
    voided = decide(page, "CHART-b2", "Void", "Yes, void it", "Sent twice.")
    assert voided["id"] == "admin-messages" and voided["role"] == "status"
    assert voided["text"] == "Record CHART-b2 voided."

    chosen = Record.objects.filter(pk__in=[r.pk for r in flagged])
    states = {r.external_record_id: r for r in chosen}
    assert not states["CHART-a2"].suspected_duplicate and not states["CHART-a2"].voided
    assert states["CHART-b2"].voided
