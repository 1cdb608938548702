"""Statistics and duplicate review in a real browser: Debian's Chromium driven by Playwright.

Screenshots land in tests/artifacts/ (git-ignored) for people to look at.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User

from registry.models import Child, Membership, Provider, Record
from tests.browser import ARTIFACTS, chromium_page
from tests.registry.factories import PASSWORD, PracticeFactory, birth, member

ROLES = [Provider.Role.MIDWIFE, Provider.Role.DOULA, Provider.Role.NURSE, Provider.Role.ASSISTANT]

pytestmark = [
    pytest.mark.browser,
]


@pytest.fixture
def reviewer(transactional_db) -> User:
    """A reviewer of St Mary's, whose records look like a small practice's year or two.

    Everything the test checks against the database is read here, before the browser's event
    loop starts: a connection opened inside it would outlive the test.
    """
    practice = PracticeFactory(slug="st-mary", name="St Mary's")
    rng = random.Random(7)
    for index in range(60):
        live = rng.random() > 0.03
        birth(
            practice,
            birth_year=rng.choice([2023, 2024]),
            attended_by=tuple(rng.sample([*ROLES, Provider.Role.OTHER], k=rng.choice([1, 1, 2]))),
            children=2 if index % 17 == 0 else 1,
            consent_granted=rng.random() > 0.2,
            voided=index % 23 == 0,
            child__outcome=Child.Outcome.LIVE_BIRTH if live else Child.Outcome.FETAL_DEATH,
            child__birth_weight_grams=int(rng.gauss(3300, 500)),
            child__gestational_age_weeks=min(42, int(rng.gauss(39, 1.8))),
            child__apgar_5=rng.choice([9, 9, 9, 8, 8, 7, 6, 4]),
        )
    birth(
        practice,
        external_record_id="CHART-1001",
        fingerprint="a" * 64,
        mother_age_years=29,
        mother_postal_prefix="841",
        attended_by=(Provider.Role.MIDWIFE,),
        child__birth_weight_grams=3320,
    )
    birth(
        practice,
        external_record_id="CHART-1002",
        fingerprint="a" * 64,
        suspected_duplicate=True,
        mother_age_years=29,
        mother_postal_prefix="841",
        attended_by=(Provider.Role.MIDWIFE, Provider.Role.NURSE),
        child__birth_weight_grams=3300,
    )
    for chart, flag, apgar in (("CHART-2001", False, 8), ("CHART-2002", True, 9)):
        birth(
            practice,
            external_record_id=chart,
            fingerprint="b" * 64,
            suspected_duplicate=flag,
            attended_by=(Provider.Role.NURSE,),
            child__apgar_5=apgar,
        )
    rita = member(practice, "rita", Membership.Role.REVIEWER, is_staff=True)
    rita.births_on_file = Record.objects.filter(voided=False).count()
    return rita


@pytest.fixture
def browser_page(reviewer, live_server, monkeypatch) -> Iterator:
    with chromium_page(live_server.url, monkeypatch) as page:
        yield page


def test_a_reviewer_reads_the_statistics_and_resolves_a_duplicate_in_a_browser(
    browser_page, reviewer, live_server
):
    page = browser_page
    ARTIFACTS.mkdir(exist_ok=True)
    elsewhere: list[str] = []
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith((live_server.url, "data:"))
            else elsewhere.append(request.url)
        ),
    )

    # Sign in on the way to the statistics page.
    page.goto("/settings/statistics/")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("rita")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Statistics", exact=True).wait_for()
    page.wait_for_load_state()  # the heading shows before the whole page is parsed
    assert page.get_by_role("link", name="Statistics").get_attribute("aria-current") == "page"
    assert page.get_by_test_id("headline-Low birth weight").is_visible()  # the answer first
    page.get_by_role("heading", name="Outcomes by attendant role").click()  # then details
    assert page.get_by_role("figure", name="Low birth weight (under 2,500 g)").is_visible()
    assert page.get_by_test_id("chart").count() == 5
    assert page.get_by_test_id("figure-births").inner_text() == str(reviewer.births_on_file)
    page.screenshot(path=str(ARTIFACTS / "settings-statistics.png"), full_page=True)

    # A year range, and a bad one explained.
    page.get_by_label("From year").fill("2024")
    page.get_by_label("To year").fill("2024")
    page.get_by_role("button", name="Show").click()
    page.get_by_text("· 2024\N{EN DASH}2024").wait_for()
    page.get_by_label("From year").fill("2025")
    page.get_by_label("To year").fill("2023")
    page.get_by_role("button", name="Show").click()
    page.get_by_text("The first year must not be after the last.").wait_for()
    page.screenshot(path=str(ARTIFACTS / "settings-statistics-bad-range.png"), full_page=True)

    # The CSV download.
    page.get_by_role("link", name="All years").click()
    with page.expect_download() as download:
        page.get_by_role("link", name="Download CSV").click()
    assert download.value.suggested_filename == "statistics-st-mary.csv"

    # The review queue in the admin, with the same session.
    page.goto("/admin/registry/record/?suspected_duplicate__exact=1")
    page.get_by_role("link", name="CHART-1002").wait_for()
    page.screenshot(path=str(ARTIFACTS / "admin-review-queue.png"), full_page=True)
    page.get_by_role("link", name="CHART-1002").click()
    page.get_by_role("heading", name="Side by side with the records it resembles").wait_for()
    assert page.get_by_role("link", name="CHART-1001", exact=True).is_visible()
    page.screenshot(path=str(ARTIFACTS / "admin-review-record.png"), full_page=True)

    # Keep it, after a confirmation step; the decision shows on the record.
    page.get_by_role("link", name="Keep: not a duplicate…").click()
    page.get_by_text("no longer flagged").wait_for()
    page.get_by_label("Note").fill("Different mothers, same surname")
    page.screenshot(path=str(ARTIFACTS / "admin-review-confirm.png"), full_page=True)
    page.get_by_role("button", name="Yes, keep it").click()
    page.get_by_text("Record CHART-1002 kept").wait_for()
    assert page.get_by_role("cell", name="Different mothers, same surname").is_visible()
    assert page.locator(".field-state .readonly").inner_text() == "On file"
    page.screenshot(path=str(ARTIFACTS / "admin-review-decided.png"), full_page=True)

    # Merge another into the record it resembles: the survivor is chosen, then confirmed.
    page.goto("/admin/registry/record/?suspected_duplicate__exact=1")
    page.get_by_role("link", name="CHART-2002").click()
    page.get_by_role("link", name="Merge this record into CHART-2001…").click()
    assert page.get_by_label("CHART-2001", exact=False).is_checked()
    page.screenshot(path=str(ARTIFACTS / "admin-review-merge.png"), full_page=True)
    page.get_by_role("button", name="Yes, merge it").click()
    page.get_by_text("Record CHART-2002 merged into CHART-2001 and voided.").wait_for()
    assert page.locator(".field-state .readonly").inner_text() == "Merged (voided)"

    assert elsewhere == []  # no CDN, no external asset: nothing is fetched from elsewhere
