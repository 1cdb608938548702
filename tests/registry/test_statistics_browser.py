"""The statistics page answers first, in a real browser at phone and desktop width.

Six practices on file (St Mary's and five others), one of which registered a single birth late
in a year no one else has: the default view still compares, says which year it leaves out,
fits about three screens at 1280 px with its details closed, and passes axe-core at both widths.

Screenshots land in tests/artifacts/ (git-ignored): settings-statistics-answer-<width>.png
(details closed) and settings-statistics-details-<width>.png (every details open).
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

MIDWIFE, NURSE, ASSISTANT = Provider.Role.MIDWIFE, Provider.Role.NURSE, Provider.Role.ASSISTANT
YEARS = list(range(2019, 2025))
THIN_YEAR = 2018  # one late registration from one other practice, and none from the rest
SCREENS_AT_1280 = 3 * 800  # three screens of an 800 px tall window ...
HEIGHT_BUDGET = 2700  # ... and a little slack


def counted(practice, rng: random.Random, year: int, group: str, births: int) -> BirthCount:
    """Another practice's kept counts for a year, as its records would have made them."""

    def share(rate: float, of: int) -> int:
        return sum(rng.random() < rate for _ in range(of))

    known = births - share(0.03, births)
    return BirthCount(
        practice=practice,
        birth_year=year,
        group=group,
        births=births,
        consent_granted=share(0.85, births),
        live_births=births,
        low_birth_weight=share(0.08, known),
        known_birth_weight=known,
        preterm=share(0.1, known),
        known_gestational_age=known,
        apgar5_below_7=share(0.04, known),
        known_apgar5=known,
        live_births_attended=births,
        live_births_consent_decided=share(0.8, births),
        with_warning=share(0.02, births) + 10,
        timeliness_known=known,
        received_within_5_days=share(0.7, known),
        received_within_10_days=share(0.9, known),
    )


@pytest.fixture
def staff(transactional_db) -> User:
    rng = random.Random(19)
    st_mary = PracticeFactory(slug="st-mary", name="St Mary's")
    for _ in range(80):
        birth(
            st_mary,
            birth_year=rng.choice(YEARS),
            attended_by=(rng.choice([MIDWIFE, MIDWIFE, NURSE, ASSISTANT]),),
            consent_granted=rng.random() > 0.15,
            child__birth_weight_grams=int(rng.gauss(3250, 600)),
            child__gestational_age_weeks=min(42, int(rng.gauss(38.5, 2))),
            child__apgar_5=rng.choice([9, 9, 9, 8, 8, 7, 6, 5]),
        )
    rows = []
    for number in range(5):
        practice = PracticeFactory()
        for year in YEARS:
            midwife, nurse = rng.randint(60, 120), rng.randint(20, 50)
            assistant = rng.randint(3, 8) if number < 2 else 0
            for group, size in (
                ("all", midwife + nurse + assistant),
                (MIDWIFE, midwife),
                (NURSE, nurse),
                (ASSISTANT, assistant),
            ):
                if size:
                    rows.append(counted(practice, rng, year, group, size))
        if number == 0:
            rows += [counted(practice, rng, THIN_YEAR, g, 1) for g in ("all", MIDWIFE)]
    BirthCount.objects.bulk_create(rows)
    return member(st_mary, "sam")


@pytest.fixture
def page(staff, live_server, monkeypatch) -> Iterator:
    with chromium_page(live_server.url, monkeypatch) as page:
        page.goto("/accounts/login/?next=/settings/statistics/")
        page.get_by_label("Username").fill("sam")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("heading", name="Statistics", exact=True).wait_for()
        yield page


def height(page) -> int:
    return page.evaluate("document.documentElement.scrollHeight")


def open_details(page) -> None:
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")


def test_the_default_view_answers_within_three_screens_at_1280(page):
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.reload()
    headline = page.get_by_test_id("headline")
    for label in ("Low birth weight", "Preterm", "5-minute Apgar below 7", "Consent granted"):
        tile = headline.get_by_test_id(f"headline-{label}")
        assert tile.is_visible(), label
        assert "Registry" in tile.inner_text()
    assert "Not shown" not in headline.locator(".tiles--compare").inner_text()  # not blank
    years = page.get_by_test_id("compared-years").inner_text()
    assert "2019" in years and "2024" in years and str(THIN_YEAR) in years
    page.screenshot(path=str(ARTIFACTS / "settings-statistics-answer-1280.png"), full_page=True)
    assert height(page) <= HEIGHT_BUDGET, f"{height(page)} px at 1280 (budget {SCREENS_AT_1280})"


@pytest.mark.parametrize("width", [390, 1280])
def test_the_page_passes_axe_and_fits_its_width_with_every_detail_open(page, width):
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": width, "height": 800})
    page.reload()
    page.screenshot(path=str(ARTIFACTS / f"settings-statistics-answer-{width}.png"), full_page=True)
    violations = Axe().run(page)
    assert violations.violations_count == 0, violations.generate_report()
    open_details(page)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    violations = Axe().run(page)
    assert violations.violations_count == 0, violations.generate_report()
    page.screenshot(
        path=str(ARTIFACTS / f"settings-statistics-details-{width}.png"), full_page=True
    )


def test_suppressed_figures_share_one_explanation(page):
    open_details(page)
    explanations = page.get_by_test_id("not-shown-explained")
    assert explanations.count() == 1
    assert page.get_by_text("Not shown", exact=True).count() > 1  # the assistants' registry
    assert "Fewer than three other practices" not in page.locator("main").inner_text()


@pytest.mark.parametrize("width", [390, 1280])
def test_trend_labels_are_horizontal_and_at_least_12px_with_axis_values(page, width):
    page.set_viewport_size({"width": width, "height": 800})
    page.reload()
    open_details(page)
    trend = page.get_by_test_id("trend-midwife-low_birth_weight")
    for selector in (".trend__label", ".trend__tick"):
        labels = trend.locator(selector)
        assert labels.count() >= 3, selector
        for index in range(labels.count()):
            style = labels.nth(index).evaluate(
                "e => { const s = getComputedStyle(e);"
                " return [parseFloat(s.fontSize), s.writingMode, s.transform]; }"
            )
            size, writing_mode, transform = style
            assert size >= 12, (selector, size)
            assert writing_mode == "horizontal-tb", (selector, writing_mode)
            assert transform == "none", (selector, transform)
    assert "faded" in trend.locator("xpath=ancestor::details[1]").inner_text()


def test_the_role_table_stacks_at_390(page):
    page.set_viewport_size({"width": 390, "height": 800})
    page.reload()
    open_details(page)
    table = page.locator("table.figures--roles")
    assert table.is_visible()
    assert page.evaluate(
        "[...document.querySelectorAll('.table-wrap')].every(w => w.scrollWidth <= w.clientWidth)"
    )
