"""The statistics page's "Data quality" section, in a real browser at phone and desktop width.

Screenshots land in tests/artifacts/ (git-ignored): settings-data-quality-390.png and
settings-data-quality-1280.png (the section alone), and the whole page beside them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.models import User

from registry.models import BirthCount, Provider
from tests.browser import ARTIFACTS, chromium_page
from tests.registry.factories import PASSWORD, PracticeFactory, birth, member

pytestmark = [pytest.mark.browser]

TIMELINESS = ["days_0_5", "days_0_5", "days_0_5", "days_6_10", "days_over_10", None]


def counted(practice, rng: random.Random, year: int, births: int) -> BirthCount:
    """Another practice's kept counts of all its births in a year (its records unwritten)."""

    def share(rate: float, of: int) -> int:
        return sum(rng.random() < rate for _ in range(of))

    known = births - share(0.05, births)
    within_10 = share(0.9, known)
    return BirthCount(
        practice=practice,
        birth_year=year,
        group="all",
        births=births,
        live_births=births,
        known_birth_weight=births - share(0.02, births),
        known_gestational_age=births - share(0.04, births),
        known_apgar5=births - share(0.03, births),
        live_births_attended=births - share(0.1, births),
        live_births_consent_decided=share(0.8, births),
        with_warning=share(0.02, births) + 10,  # never a small count: shown
        timeliness_known=known,
        received_within_5_days=share(0.75, within_10),
        received_within_10_days=within_10,
    )


@pytest.fixture
def staff(transactional_db) -> User:
    """St Mary's (60 births over two years, some incomplete or late) beside five practices."""
    rng = random.Random(23)
    st_mary = PracticeFactory(slug="st-mary", name="St Mary's")
    for _ in range(60):
        birth(
            st_mary,
            birth_year=rng.choice([2023, 2024]),
            attended_by=(Provider.Role.MIDWIFE,) if rng.random() > 0.05 else (),
            consent_decided=rng.random() > 0.3,
            drew_warning=rng.random() < 0.05,
            timeliness=rng.choice(TIMELINESS),
            child__birth_weight_grams=None if rng.random() < 0.1 else 3300,
            child__apgar_5=None if rng.random() < 0.2 else 9,
        )
    BirthCount.objects.bulk_create(
        counted(PracticeFactory(), rng, year, rng.randint(80, 200))
        for _ in range(5)
        for year in (2023, 2024)
    )
    return member(st_mary, "sam")


@pytest.fixture
def page(staff, live_server, monkeypatch) -> Iterator:
    with chromium_page(live_server.url, monkeypatch) as page:
        yield page


@pytest.mark.parametrize("width", [390, 1280])
def test_the_data_quality_section_reads_at_a_glance_at_phone_and_desktop_width(page, width):
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/settings/statistics/")
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    section = page.locator(".quality")
    page.get_by_role("heading", name="Data quality").wait_for()
    page.get_by_role("heading", name="Data quality").click()  # details on demand

    glance = section.locator(".quality-glance")
    for label in ("Least complete", "Drew a warning", "Received within 5 days"):
        tile = glance.get_by_text(label, exact=True)
        assert tile.is_visible(), label
    assert glance.get_by_text("Registry: ").count() == 3  # the registry beside each
    for part, rows in (("completeness", 5), ("plausibility", 1), ("timeliness", 2)):
        chart = page.get_by_test_id(f"quality-{part}")
        assert chart.is_visible()
        assert chart.locator(".bench-row").count() == rows
        assert chart.get_by_text("Registry", exact=True).count() == rows
    completeness = page.get_by_test_id("quality-completeness").inner_text()
    assert "Consent decision" in completeness and "practices" in completeness
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    text_size = section.locator(".bench-bar__text").first.evaluate(
        "e => parseFloat(getComputedStyle(e).fontSize)"
    )
    assert text_size >= 13, f"figures are {text_size}px"

    violations = Axe().run(page, context=".quality")
    assert violations.violations_count == 0, violations.generate_report()

    section.screenshot(path=str(ARTIFACTS / f"settings-data-quality-{width}.png"))
    glance.screenshot(path=str(ARTIFACTS / f"settings-data-quality-glance-{width}.png"))
    page.screenshot(
        path=str(ARTIFACTS / f"settings-statistics-quality-{width}.png"), full_page=True
    )
