"""Every settings page and every page a reviewer uses, at a phone's width and a desktop's.

Debian's Chromium (driven by Playwright) opens each page at 390 px and 1280 px and checks
that the page is no wider than the screen (a wide table scrolls inside its own box), that
the texts a person needs are visible, and that chart text keeps a readable size. Screenshots
land in tests/artifacts/widths/ (git-ignored), named ``<page>-<width>.png``, to look at.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from keys.models import INGEST_READ, INGEST_WRITE, KeyEvent
from keys.services import key_mint, key_revoke, key_rotate
from registry.models import Child, Membership, Practice, Provider
from tests.browser import ARTIFACTS, chromium_page
from tests.registry.factories import PASSWORD, PracticeFactory, birth, member

pytestmark = [pytest.mark.browser]

WIDTHS = [390, 1280]
SHOTS = ARTIFACTS / "widths"
ROLES = [Provider.Role.MIDWIFE, Provider.Role.DOULA, Provider.Role.NURSE, Provider.Role.ASSISTANT]


@pytest.fixture
def registry(transactional_db) -> dict[str, Any]:
    """St Mary's: a year of births (some roles thin), two suspected duplicates, a key history.

    Written before the browser's event loop starts (see tests/browser.py).
    """
    practice = PracticeFactory(slug="st-mary", name="St Mary's Birth Centre")
    PracticeFactory(slug="riverside-community-midwifery", name="Riverside Community Midwifery")
    rng = random.Random(14)
    for _ in range(45):
        birth(
            practice,
            birth_year=2024,
            attended_by=(rng.choice(ROLES[:3]),),
            child__outcome=Child.Outcome.LIVE_BIRTH,
            child__birth_weight_grams=int(rng.gauss(3300, 500)),
            child__gestational_age_weeks=min(42, int(rng.gauss(39, 1.8))),
            child__apgar_5=rng.choice([9, 9, 8, 8, 7, 6]),
        )
    _resembling(practice, "CHART-1001", "CHART-1002", "a")
    _resembling(practice, "CHART-2001", "CHART-2002", "b")
    sam = member(practice, "sam")
    rita = member(practice, "rita", Membership.Role.REVIEWER, is_staff=True)
    User.objects.create_superuser("root", password=PASSWORD)
    _key_history(practice, sam)
    return {"practice": practice, "sam": sam, "rita": rita}


def _resembling(practice: Practice, first: str, second: str, letter: str) -> None:
    birth(
        practice,
        external_record_id=first,
        fingerprint=letter * 64,
        mother_age_years=29,
        mother_postal_prefix="841",
        attended_by=(Provider.Role.MIDWIFE,),
        child__apgar_1=7,
        child__apgar_10=9,
    )
    birth(  # the same fingerprint: the factory's match keys make them resemble
        practice,
        external_record_id=second,
        fingerprint=letter * 64,
        suspected_duplicate=True,
        mother_age_years=29,
        mother_postal_prefix="842",
        attended_by=(Provider.Role.MIDWIFE, Provider.Role.NURSE),
        child__birth_weight_grams=3290,
    )


def _key_history(practice: Practice, by: User) -> None:
    """Minted, rotated twice and revoked: a history table wider than a phone."""
    via = KeyEvent.Via.SETTINGS
    key, _ = key_mint(practice=practice, scopes=[INGEST_WRITE, INGEST_READ], by=by, via=via)
    for _ in range(2):
        key, _ = key_rotate(practice=practice, expected_prefix=key.prefix, by=by, via=via)
    key_revoke(practice=practice, expected_prefix=key.prefix, by=by, via=via)


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def width(request) -> int:
    return request.param


@pytest.fixture
def browser_page(registry, live_server, monkeypatch, width) -> Iterator[Any]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(live_server.url, monkeypatch, clipboard=True) as page:
        page.set_viewport_size({"width": width, "height": 844 if width < 600 else 900})
        yield page


def check(page: Any, name: str, *texts: str) -> None:
    """The page fits the screen's width, ``texts`` are visible, and a screenshot is saved."""
    width = page.viewport_size["width"]
    page.wait_for_load_state()
    for text in texts:
        assert page.get_by_text(text).first.is_visible(), f"{name}: {text!r} is not visible"
    page_width = page.evaluate("document.documentElement.scrollWidth")
    assert page_width <= width, f"{name} is {page_width}px wide at {width}px: {wide(page)}"
    page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)


SCROLL_BOXES = ".table-wrap, .review-compare__scroll, .results"  # may be wider inside
WIDE = """() => [...document.querySelectorAll("body *")]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .filter(e => !(e.parentElement && e.parentElement.closest(`SCROLL_BOXES`)))
  .slice(0, 5)
  .map(e => `${e.tagName} ${e.className} ${Math.round(e.getBoundingClientRect().right)}px`)
""".replace("SCROLL_BOXES", SCROLL_BOXES)


def wide(page: Any) -> list[str]:
    """The first elements that reach past the screen's right edge, to say what to fix."""
    return page.evaluate(WIDE)


def sign_in(page: Any, username: str, path: str = "/settings/") -> None:
    page.goto(f"/accounts/login/?next={path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()


def test_the_settings_area_fits_the_screen(browser_page):
    page = browser_page
    page.goto("/")
    check(page, "home-visitor", "Birth registry", "Sign in", "Integrators")
    page.goto("/accounts/login/")
    check(page, "login", "Sign in", "Username", "Password")

    sign_in(page, "sam")
    check(page, "settings-key-none", "API key", "No active key", "History", "Revoked")
    page.get_by_role("link", name="Mint a key…").click()
    check(page, "settings-key-mint", "Mint a key", "shown once")
    page.get_by_role("button", name="Mint key").click()
    page.wait_for_load_state()
    check(page, "settings-key-token", "Your new key", "Copy it now.", "Authorization: Bearer rgk_")
    header = page.locator("#auth-header")
    assert header.evaluate("e => e.scrollWidth <= e.clientWidth"), "the header line is cut"
    page.get_by_role("button", name="Copy header").click()
    page.get_by_text("Copied to the clipboard.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()").startswith("Authorization: Bearer rgk_")

    page.get_by_role("link", name="back to the key").click()
    check(page, "settings-key", "Active key", "History", "Rotate key…")
    table = page.locator(".table-wrap").first
    assert table.evaluate("e => e.getBoundingClientRect().right <= window.innerWidth")
    page.get_by_role("link", name="Rotate key…").click()
    check(page, "settings-key-rotate", "Rotate the key", "Rotating revokes")
    page.goto("/settings/key/revoke/")
    check(page, "settings-key-revoke", "Revoke the key", "cannot be undone")

    page.goto("/settings/statistics/")
    check(
        page, "settings-statistics", "Statistics", "At a glance", "Low birth weight", "unreliable"
    )
    label_size = page.locator(".bar-chart__label").first.evaluate(
        "e => parseFloat(getComputedStyle(e).fontSize)"
    )
    assert label_size >= 13, f"chart labels are {label_size}px"
    page.goto("/settings/statistics/?from=2030&to=2031")
    check(page, "settings-statistics-empty", "No births in this range", "Show all years")
    page.goto("/settings/statistics/?from=2031&to=2030")
    check(page, "settings-statistics-bad-range", "The first year must not be after the last.")

    page.goto("/settings/password/")
    check(page, "settings-password", "Change your password", "Old password", "New password")
    page.goto("/settings/password/done/")
    check(page, "settings-password-done", "Password changed")
    page.goto("/settings/practices/")
    check(page, "settings-practices", "Choose a practice", "St Mary's Birth Centre")
    page.goto("/")
    check(page, "home-staff", "Open the settings area", "does not review any practice")

    page.goto("/settings/key/?practice=nope")
    check(page, "error-404", "Page not found", "Where to go from here")
    page.goto("/no/such/page/")
    check(page, "error-404-path", "Page not found")


def test_the_superuser_chooses_a_practice_on_any_screen(browser_page):
    page = browser_page
    sign_in(page, "root", "/settings/statistics/")
    check(page, "settings-practices-superuser", "Choose a practice", "Riverside Community")
    page.get_by_role("link", name="St Mary's Birth Centre").click()
    check(page, "settings-statistics-superuser", "Statistics", "Superuser", "Choose another")


def test_the_review_admin_fits_the_screen(browser_page):
    page = browser_page
    page.goto("/admin/login/?next=/admin/")
    check(page, "admin-login", "Birth registry: review admin", "Username")
    sign_in(page, "rita", "/settings/key/")
    check(page, "settings-key-reviewer", "API key", "Staff members of this practice")
    page.goto("/settings/key/rotate/")
    check(page, "error-403", "Not allowed", "Only staff members of the practice manage its key.")
    page.goto("/settings/statistics/")
    page.get_by_role("link", name="open the review queue").click()
    check(page, "admin-queue", "Review queue: suspected duplicates", "CHART-1002", "CHART-2002")

    page.get_by_role("link", name="Review admin").first.click()
    check(page, "admin-home", "Review queue (2)", "Settings", "Duplicate review")
    page.get_by_role("link", name="Review queue (2)").first.click()
    page.get_by_role("link", name="CHART-1002").click()
    check(
        page,
        "admin-record",
        "Side by side with the records it resembles",
        "St Mary's Birth Centre (st-mary)",
        "Apgar 1 min 7, 5 min 9, 10 min 9",
        "Review decision",
    )
    page.get_by_role("link", name="Keep: not a duplicate…").click()
    check(page, "admin-review-keep", "no longer flagged", "Yes, keep it")
    page.go_back()
    page.get_by_role("link", name="Void…").click()
    check(page, "admin-review-void", "voided", "Yes, void it")
    page.go_back()
    page.get_by_role("link", name="Merge this record into CHART-1001…").click()
    check(page, "admin-review-merge", "Survivor", "Yes, merge it")
    page.get_by_role("button", name="Yes, merge it").click()
    page.get_by_text("Record CHART-1002 merged into CHART-1001 and voided.").wait_for()
    check(page, "admin-record-merged", "Merged (voided)", "CHART-1001 v1")

    page.goto("/admin/registry/record/?suspected_duplicate__exact=1&voided__exact=0")
    page.locator("input[name=_selected_action]").first.check()
    page.locator("select[name=action]").select_option("keep_selected")
    page.get_by_role("button", name="Go").click()
    check(page, "admin-review-selected", "no longer flagged", "Yes, keep them")
    page.get_by_role("button", name="Yes, keep them").click()
    page.get_by_text("1 of 1 records kept.").wait_for()
    check(page, "admin-queue-empty", "Nothing awaits review.", "Review queue (0)")
    page.get_by_role("link", name="All records").first.click()
    check(page, "admin-records", "All records", "CHART-1001")


CUE = """() => {
  const box = document.querySelector("#changelist .results");
  return {scrolls: box.scrollWidth > box.clientWidth, image: getComputedStyle(box).backgroundImage};
}"""


def test_a_key_list_cut_by_a_phone_says_there_is_more(browser_page, width):
    page = browser_page
    sign_in(page, "root", "/admin/keys/apikey/")
    page.goto("/admin/keys/apikey/")
    check(page, "admin-keys", "ingest:write")
    box = page.evaluate(CUE)
    if width < 768:  # the list is wider than the phone: its edges cast shadows
        assert box["scrolls"]
        assert box["image"].count("radial-gradient") == 2, box["image"]
    else:
        assert "gradient" not in box["image"]


def test_the_members_pages_fit_the_screen(browser_page):
    page = browser_page
    sign_in(page, "sam", "/settings/members/")
    check(page, "settings-members", "Members", "Invitations waiting", "Send invitation")
    page.get_by_label("Email address").fill("new-colleague@example.org")
    with override_settings(REGISTRY_PASSWORD_RESET=False):  # no mail: the link is shown
        page.get_by_role("button", name="Send invitation").click()
        check(page, "settings-members-link", "Invitation link", "No mail was sent.")
    link = page.locator("#invitation-link").input_value()
    page.get_by_role("link", name="Back to the members").click()
    check(page, "settings-members-waiting", "new-colleague@example.org", "Send again")
    page.get_by_role("button", name="Sign out").click()
    page.goto(link)
    check(page, "invitation-accept", "Accept the invitation", "Password again")
    sign_in(page, "root", "/settings/practices/new/")
    check(page, "settings-practice-new", "Add a practice", "Real: its records count")
