"""The benchmarks on the statistics page, in a real browser at phone and desktop width.

Screenshots land in tests/artifacts/ (git-ignored): settings-benchmarks-390.png and
settings-benchmarks-1280.png.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User

from registry.models import BirthCount, Provider
from tests.browser import ARTIFACTS, chromium_page
from tests.registry.factories import PASSWORD, PracticeFactory, birth, member

pytestmark = [pytest.mark.browser]

MIDWIFE, DOULA, NURSE, ASSISTANT = (
    Provider.Role.MIDWIFE,
    Provider.Role.DOULA,
    Provider.Role.NURSE,
    Provider.Role.ASSISTANT,
)


def births(practice, rng: random.Random, number: int, roles, years) -> None:
    for _ in range(number):
        birth(
            practice,
            birth_year=rng.choice(years),
            attended_by=(rng.choice(roles),),
            consent_granted=rng.random() > 0.15,
            child__birth_weight_grams=int(rng.gauss(3250, 600)),
            child__gestational_age_weeks=min(42, int(rng.gauss(38.5, 2))),
            child__apgar_5=rng.choice([9, 9, 9, 8, 8, 7, 6, 5]),
        )


def counted(practice, rng: random.Random, year: int, group: str, births: int) -> BirthCount:
    """Another practice's kept counts for a year, as its records would have made them.

    The page reads only the kept counts; writing them directly keeps this test quick.
    """

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
    )


@pytest.fixture
def staff(transactional_db) -> User:
    """St Mary's beside eight larger practices; doulas at only one of them (never shown),
    assistants at three, a few a year (shown only where no year is too thin)."""
    rng = random.Random(15)
    years = list(range(2019, 2025))
    st_mary = PracticeFactory(slug="st-mary", name="St Mary's")
    births(st_mary, rng, 70, [MIDWIFE, MIDWIFE, NURSE, DOULA], years)
    rows = []
    for number in range(8):
        practice = PracticeFactory()
        for year in years:
            midwife, nurse = rng.randint(60, 120), rng.randint(20, 50)
            assistant = rng.randint(3, 8) if number < 3 else 0
            doula = rng.randint(10, 20) if number == 0 else 0
            for group, size in (
                ("all", midwife + nurse + assistant + doula),
                (MIDWIFE, midwife),
                (NURSE, nurse),
                (ASSISTANT, assistant),
                (DOULA, doula),
            ):
                if size:
                    rows.append(counted(practice, rng, year, group, size))
    BirthCount.objects.bulk_create(rows)
    return member(st_mary, "sam")


@pytest.fixture
def page(staff, live_server, monkeypatch) -> Iterator:
    with chromium_page(live_server.url, monkeypatch) as page:
        yield page


@pytest.mark.parametrize("width", [390, 1280])
def test_the_benchmarks_read_at_phone_and_desktop_width(page, width):
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/settings/statistics/")
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="At a glance").wait_for()
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")

    chart = page.get_by_test_id("benchmark-low_birth_weight")
    assert chart.get_by_text("Registry").first.is_visible()
    assert "practices" in chart.inner_text()  # a registry figure is shown, with its counts
    assert "Not shown" in page.get_by_test_id("benchmark-births").inner_text()  # doulas
    assert page.locator(".bench-flag").count() > 1  # unreliable rates are marked
    assert page.get_by_test_id("trend-midwife-low_birth_weight").is_visible()
    assert page.get_by_test_id("trend-midwife-preterm").is_visible()
    assert page.get_by_test_id("trend-assistant-preterm").count() == 0  # none of its own
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=str(ARTIFACTS / f"settings-benchmarks-{width}.png"), full_page=True)
