"""The key actions with a keyboard alone, each announced: focus lands on the message, which is
a live region (role="status"). Also how the settings area marks destructive actions and focus.

Screenshots land in tests/artifacts/: settings-key-rotate-confirm-<width>.png and
settings-key-focus-1280.png.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User

from keys.models import SCOPES, KeyEvent
from keys.services import key_mint
from registry.models import Membership, Practice
from tests.browser import ARTIFACTS, chromium_page

PASSWORD = "correct horse battery staple"
DANGER = "rgb(179, 38, 30)"  # --danger in settings.css
FOCUSED = "document.activeElement"

pytestmark = [pytest.mark.browser]


@pytest.fixture
def staff_member(transactional_db) -> User:
    practice = Practice.objects.create(slug="st-mary", name="St Mary's")
    user = User.objects.create_user("sam", password=PASSWORD)
    Membership.objects.create(user=user, practice=practice, role=Membership.Role.STAFF)
    key_mint(practice=practice, scopes=SCOPES, via=KeyEvent.Via.COMMAND)
    return user


@pytest.fixture
def page(staff_member, live_server, monkeypatch) -> Iterator:
    with chromium_page(live_server.url, monkeypatch) as page:
        page.goto("/accounts/login/?next=/settings/key/")
        page.get_by_label("Username").fill("sam")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("heading", name="API key", exact=True).wait_for()
        page.wait_for_load_state()
        yield page


def tab_to(page, name: str, *, limit: int = 40) -> None:
    """Press Tab until the focused element's accessible text is ``name``."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(f"{FOCUSED}.innerText.trim()") == name:
            return
    pytest.fail(f"Tab never reached {name!r}")


def announced(page, timeout: float = 10) -> str:
    """The focused element's text, once the focus is (inside) a live region.

    Polled from here: ``wait_for_function`` with a string compiles it in the page when it
    has to poll, which the page's policy (no eval) refuses."""
    region = f"{FOCUSED}.closest('[role=status]')"
    deadline = time.monotonic() + timeout
    while page.evaluate(f"{region} === null"):
        assert time.monotonic() < deadline, "the focus never reached a live region"
        page.wait_for_timeout(50)
    return page.evaluate(f"{region}.innerText")


def test_rotate_then_revoke_with_the_keyboard_alone_each_announced(page):
    ARTIFACTS.mkdir(exist_ok=True)
    tab_to(page, "Rotate key…")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Rotate the key").wait_for()
    page.screenshot(path=str(ARTIFACTS / "settings-key-rotate-confirm-1280.png"), full_page=True)
    tab_to(page, "Rotate key")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Your new key").wait_for()
    assert "was rotated" in announced(page)

    page.goto("/settings/key/")
    page.wait_for_load_state()
    tab_to(page, "Revoke key…")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Revoke the key").wait_for()
    tab_to(page, "Revoke key")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="No active key").wait_for()
    assert "revoked" in announced(page)

    tab_to(page, "Mint a key…")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Mint a key").wait_for()
    tab_to(page, "Mint key")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Your new key").wait_for()
    assert "was minted" in announced(page)


def test_rotate_and_revoke_look_destructive(page):
    for link in ("Rotate key…", "Revoke key…"):
        color = page.get_by_role("link", name=link).evaluate("e => getComputedStyle(e).color")
        assert color == DANGER, link
    page.get_by_role("link", name="Rotate key…").click()
    button = page.get_by_role("button", name="Rotate key")
    assert button.evaluate("e => getComputedStyle(e).backgroundColor") == DANGER
    page.set_viewport_size({"width": 390, "height": 800})
    page.screenshot(path=str(ARTIFACTS / "settings-key-rotate-confirm-390.png"), full_page=True)


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one: tuple[int, int, int], other: tuple[int, int, int]) -> float:
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def ring_colours(page) -> list[tuple[int, int, int]]:
    shadow = page.evaluate(f"getComputedStyle({FOCUSED}).boxShadow")
    import re

    return [
        tuple(int(v) for v in match) for match in re.findall(r"rgb\((\d+), (\d+), (\d+)\)", shadow)
    ]


@pytest.mark.parametrize(
    "background",
    [(255, 255, 255), (244, 246, 249), (29, 36, 48), (31, 95, 168), (255, 244, 214)],
    ids=["white", "wash", "header", "brand", "warning"],
)
def test_the_focus_ring_stands_out_at_3_to_1_on_any_background(page, background):
    tab_to(page, "Rotate key…")
    rings = ring_colours(page)
    assert len(rings) == 2, rings  # a light ring and a dark one around it
    assert max(contrast(ring, background) for ring in rings) >= 3, (rings, background)
    page.screenshot(path=str(ARTIFACTS / "settings-key-focus-1280.png"))


def test_the_practice_switcher_stays_inside_its_card_at_1280(staff_member, page):
    other = Practice.objects.create(
        slug="north", name="Northern Community Midwifery and Birth Centre Cooperative"
    )
    Membership.objects.create(user=staff_member, practice=other, role=Membership.Role.STAFF)
    page.goto("/settings/key/?practice=st-mary")
    card = page.locator(".settings__side").bounding_box()
    for part in ("#practice-switcher", ".switcher .button"):
        box = page.locator(part).bounding_box()
        assert box["x"] + box["width"] <= card["x"] + card["width"], part
    page.locator(".settings__side").screenshot(path=str(ARTIFACTS / "settings-switcher-1280.png"))
