"""The scorecard: a practice's months beside the registry's, on known kept counts, and what the
suppression rules let through on a thin registry and to a person of two practices.

Rows of the kept counts are written directly with known values (the pipeline keeps them;
tests/registry/test_counts.py checks that it does).
"""

from __future__ import annotations

import csv
import io
from datetime import date, datetime, timedelta
from itertools import combinations
from typing import Any

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.models import Practice, ReceivedCount, SubmissionCount
from registry.statistics.benchmarks import ALL, MIN_PRACTICES, SMALL_COUNT, Cell
from registry.statistics.scorecard import (
    BEFORE,
    FIGURES,
    RECEIVED,
    RECEIVED_COUNTS,
    SUBMITTED_COUNTS,
    months_ending,
    registry_totals,
    scorecard,
    scorecard_cells,
    scorecard_for_practice,
)
from registry.statistics.tasks import refresh_scorecard_totals
from tests.registry.conftest import signed_in
from tests.registry.factories import PracticeFactory, member

pytestmark = pytest.mark.django_db

TODAY = date(2026, 11, 15)
THIS_MONTH, LAST_MONTH = "2026-11", "2026-10"


def sent(practice: Practice, day: date, courses: int, rejected: int = 0) -> None:
    SubmissionCount.objects.create(
        practice=practice,
        day=day,
        ingestions=1,
        courses=courses,
        accepted=courses - rejected,
        rejected=rejected,
        last_received_at=timezone.make_aware(datetime(day.year, day.month, day.day)),
    )


def received(practice: Practice, day: date, births: int, **counts: int) -> None:
    """``births`` births first received on ``day``, all live, every item complete unless a
    count says otherwise."""
    full = {
        "births": births,
        "live_births": births,
        "known_birth_weight": births,
        "known_gestational_age": births,
        "known_apgar5": births,
        "live_births_attended": births,
        "live_births_consent_decided": births,
        "timeliness_known": births,
        "received_within_10_days": births,
        "with_warning": 0,
    }
    ReceivedCount.objects.create(practice=practice, day=day, **(full | counts))


def month(card: dict[str, Any], label: str) -> dict[str, Any]:
    [row] = [row for row in card["by_month"] if row["month"] == label]
    return row["figures"]


def busy_registry(days: list[date], others: int = 3) -> tuple[Practice, list[Practice]]:
    """St Mary's and ``others`` practices of 20 births and courses on each day."""
    clinic = PracticeFactory(slug="st-mary")
    rest = [PracticeFactory() for _ in range(others)]
    for practice in rest:
        for day in days:
            sent(practice, day, 20, rejected=4)
            received(practice, day, 20, with_warning=4, received_within_10_days=10)
    return clinic, rest


# --- The figures on known data -----------------------------------------------------------------


def test_figures_of_a_month_beside_the_registry():
    clinic, _ = busy_registry([date(2026, 10, 3)])
    sent(clinic, date(2026, 10, 5), 30, rejected=3)
    sent(clinic, date(2026, 10, 20), 10, rejected=1)  # two days of one month add up
    received(clinic, date(2026, 10, 5), 40, with_warning=2, known_apgar5=30)

    card = scorecard_for_practice(practice=clinic, today=TODAY)

    assert card["months"][0] == THIS_MONTH and len(card["months"]) == 24
    october = month(card, LAST_MONTH)
    assert october["courses"]["practice"]["numerator"] == 40
    assert october["courses"]["registry"] | {} == {
        "rate": 1.0,
        "numerator": 100,
        "denominator": 100,
        "unreliable": False,
        "practices": 4,
    }
    assert october["rejected"]["practice"]["rate"] == 0.1  # 4 of 40
    assert october["rejected"]["registry"]["numerator"] == 16  # 4 + 3 x 4
    assert october["warned"]["practice"]["rate"] == 0.05  # 2 of 40
    assert october["warned"]["registry"]["rate"] == round(14 / 100, 4)
    assert october["within_10_days"]["practice"]["rate"] == 1.0
    assert october["within_10_days"]["registry"] == {  # (40 + 3 x 10) of 100, a rate only
        "rate": 0.7,
        "unreliable": False,
        "practices": 4,
    }
    assert october["apgar_5"]["practice"]["rate"] == 0.75  # 30 of 40
    assert october["birth_weight"]["registry"]["rate"] == 1.0
    # A month with nothing from anyone: the practice's zeros, no registry figure.
    assert month(card, "2026-09")["courses"]["practice"]["numerator"] == 0
    assert "suppressed" in month(card, "2026-09")["courses"]["registry"]


def test_the_practice_sees_its_own_figures_whatever_the_registry():
    clinic = PracticeFactory(slug="st-mary")
    received(clinic, date(2026, 10, 5), 3, with_warning=1)
    october = month(scorecard_for_practice(practice=clinic, today=TODAY), LAST_MONTH)
    assert october["warned"]["practice"] | {} == {
        "rate": 0.3333,
        "numerator": 1,
        "denominator": 3,
        "unreliable": True,
    }
    assert "suppressed" in october["warned"]["registry"]


def test_a_sandbox_sees_its_own_figures_and_no_comparison():
    clinic, _ = busy_registry([date(2026, 10, 3)])
    box = PracticeFactory(sandbox=True)
    sent(box, date(2026, 10, 5), 5)
    card = scorecard_for_practice(practice=box, today=TODAY)
    assert card["comparison_withheld"]
    october = month(card, LAST_MONTH)
    assert october["courses"]["practice"]["numerator"] == 5
    assert october["courses"]["registry"] == {"suppressed": card["comparison_withheld"]}
    # ... and its courses never count in another's registry figure.
    theirs = month(scorecard_for_practice(practice=clinic, today=TODAY), LAST_MONTH)
    assert theirs["courses"]["registry"]["numerator"] == 60


# --- Suppression on a thin registry ------------------------------------------------------------


@pytest.mark.parametrize("practices", [1, 2, 3])
def test_a_thin_registry_shows_no_registry_figure(practices):
    clinic, _ = busy_registry([date(2026, 10, 3)], others=practices - 1)
    sent(clinic, date(2026, 10, 3), 50, rejected=5)
    received(clinic, date(2026, 10, 3), 50, with_warning=5)
    card = scorecard_for_practice(practice=clinic, today=TODAY)
    for row in card["by_month"]:
        for sides in row["figures"].values():
            assert "suppressed" in sides["registry"]


def test_a_person_of_two_practices_of_four_sees_no_registry_figure():
    """Alone, St Mary's staff see the registry (three others contribute); someone who is also
    in one of those would, subtracting both their practices, be left with two: not shown."""
    clinic, (second, *_) = busy_registry([date(2026, 10, 3)])
    received(clinic, date(2026, 10, 3), 50)
    alone = month(scorecard_for_practice(practice=clinic, today=TODAY), LAST_MONTH)
    assert "suppressed" not in alone["warned"]["registry"]
    both = month(
        scorecard_for_practice(practice=clinic, members_of=[second.pk], today=TODAY), LAST_MONTH
    )
    assert all("suppressed" in sides["registry"] for sides in both.values())


def test_a_month_where_others_send_few_is_not_shown():
    clinic, rest = busy_registry([date(2026, 9, 3), date(2026, 10, 3)])
    for practice in rest:
        sent(practice, date(2026, 8, 3), 3)  # 9 courses from three others in August
    card = scorecard_for_practice(practice=clinic, today=TODAY)
    assert month(card, "2026-08")["courses"]["registry"] == {
        "suppressed": "Other practices' part is between 1 and 9."
    }
    assert "suppressed" not in month(card, "2026-09")["courses"]["registry"]


def test_the_months_not_shown_are_never_a_small_remainder():
    """The statistics page shows all-time sums of the received counts: with a thin August
    hidden, its few births would be the total less the months shown, so the oldest month
    shown (September) is held back with it."""
    clinic, rest = busy_registry([date(2026, 9, 3), date(2026, 10, 3)])
    for practice in rest:
        received(practice, date(2026, 8, 3), 1, with_warning=1)
    card = scorecard_for_practice(practice=clinic, today=TODAY)
    assert "suppressed" in month(card, "2026-08")["warned"]["registry"]
    assert "Hidden with the months" in month(card, "2026-09")["warned"]["registry"]["suppressed"]
    assert "suppressed" not in month(card, LAST_MONTH)["warned"]["registry"]
    # The submission counts are on no other page: September's courses stand.
    assert "suppressed" not in month(card, "2026-09")["courses"]["registry"]


def test_a_large_remainder_hides_nothing_more():
    clinic, rest = busy_registry([date(2026, 9, 3), date(2026, 10, 3)])
    for practice in rest:
        received(practice, date(2023, 1, 3), 30)  # long before the 24 months
        received(practice, date(2026, 8, 3), 1)
    card = scorecard_for_practice(practice=clinic, today=TODAY)
    assert "suppressed" in month(card, "2026-08")["warned"]["registry"]
    assert "suppressed" not in month(card, "2026-09")["warned"]["registry"]


# --- The rules hold for any registry and any viewer -------------------------------------------

MONTHS = months_ending(TODAY, 4)
COUNTS = sorted(set(SUBMITTED_COUNTS) | set(RECEIVED_COUNTS))
# Small numbers, often 0 or a few, so that every rule is met and broken.
amount = st.sampled_from([0, 0, 1, 3, 9, 10, 12, 30])


def cells_for(table: dict[int, dict[int, dict[str, int]]], viewer: set[int], own: int) -> Any:
    """What :func:`scorecard_cells` reads, from per practice, month and count amounts."""
    cells = {}
    for key in [BEFORE, *MONTHS]:
        parts: dict[str, dict[str, int]] = {
            s: {} for s in ("own", "fellows", "others", "contributors", "practices")
        }
        for count in COUNTS:
            values = {p: table[p][key].get(count, 0) for p in table}
            others = [v for p, v in values.items() if p not in viewer]
            parts["own"][count] = values[own]
            parts["fellows"][count] = sum(v for p, v in values.items() if p in viewer - {own})
            parts["others"][count] = sum(others)
            parts["contributors"][count] = sum(1 for v in others if v)
            parts["practices"][count] = sum(1 for v in values.values() if v)
        cells[(ALL, key)] = Cell(**parts)
    return cells


def publishable(values: list[int]) -> bool:
    total = sum(values)
    return total == 0 or (total not in SMALL_COUNT and sum(1 for v in values if v) >= 3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(min_value=2, max_value=6).flatmap(
        lambda n: st.lists(
            st.lists(st.dictionaries(st.sampled_from(COUNTS), amount), min_size=5, max_size=5),
            min_size=n,
            max_size=n,
        )
    )
)
def test_no_viewer_can_work_out_a_part_the_rules_hide(rows):
    """For every set of practices a person may belong to and each of their scorecards:
    every registry figure shown leaves, once their practices are taken out, a part of each
    count that is 0 or at least 10 from three practices; and for each received count, what
    the months shown leave of the all-time total is such a part too."""
    table = {p: dict(zip([BEFORE, *MONTHS], months, strict=True)) for p, months in enumerate(rows)}
    practices = list(table)
    for size in (1, 2):
        for viewer in map(set, combinations(practices, size)):
            for own in viewer:
                card = scorecard(cells=cells_for(table, viewer, own), months=MONTHS)
                others = [p for p in practices if p not in viewer]
                shown_months: dict[str, set[str]] = {count: set() for count in COUNTS}
                for row in card:
                    key = int(row["month"].replace("-", ""))
                    for figure in FIGURES:
                        if "suppressed" in row["figures"][figure.name]["registry"]:
                            continue
                        base = figure.base(ALL)[1]
                        assert sum(1 for p in others if table[p][key].get(base)) >= MIN_PRACTICES
                        for count in (figure.numerator, figure.denominator):
                            assert publishable([table[p][key].get(count, 0) for p in others])
                            shown_months[count].add(key)
                for figure in RECEIVED:
                    for count in (figure.numerator, figure.denominator):
                        if not shown_months[count]:
                            continue  # no month shown: the scorecard tells nothing of it
                        hidden = [k for k in [BEFORE, *MONTHS] if k not in shown_months[count]]
                        left = [sum(table[p][k].get(count, 0) for k in hidden) for p in others]
                        assert publishable(left), (viewer, own, count)


def test_the_cells_read_are_those_of_the_rows(django_assert_num_queries):
    """The reads agree with the model the property above checks: a query per table for the
    viewer's practices, and per table for the registry's totals, which are then cached."""
    clinic, rest = busy_registry([date(2026, 10, 3)])
    second = rest[0]
    received(clinic, date(2024, 1, 1), 7)  # before the 24 months
    read = {"practice": clinic, "members_of": [second.pk], "months": months_ending(TODAY)}
    with django_assert_num_queries(4):
        cells = scorecard_cells(**read, withheld=False)
    with django_assert_num_queries(2):
        assert scorecard_cells(**read, withheld=False) == cells
    october = cells[(ALL, 202610)]
    assert october.fellows["births"] == 20
    assert october.others["births"] == 40
    assert october.contributors["courses"] == 2
    assert october.practices is not None and october.practices["courses"] == 3
    assert cells[(ALL, BEFORE)].own["births"] == 7


# --- JSON, CSV and access ----------------------------------------------------------------------


def test_json_and_csv_for_the_practices_members(st_mary):
    today = timezone.now().date()
    sent(st_mary, today, 12, rejected=3)
    client = signed_in(member(st_mary, "sam"))

    data = client.get("/settings/statistics/scorecard.json?practice=st-mary").json()
    assert data["practice"] == "st-mary"
    assert data["by_month"][0]["figures"]["rejected"]["practice"]["rate"] == 0.25

    response = client.get("/settings/statistics/scorecard.csv?practice=st-mary")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 24 * len(FIGURES) * 2
    [ours] = [r for r in rows if r["figure"] == "rejected" and r["source"] == "practice"][:1]
    assert (ours["numerator"], ours["denominator"], ours["value"]) == ("3", "12", "0.25")
    theirs = next(r for r in rows if r["figure"] == "rejected" and r["source"] == "registry")
    assert theirs["suppressed"] and not theirs["numerator"]


def test_no_one_reads_another_practices_scorecard(st_mary, riverside):
    sent(riverside, timezone.now().date(), 12)
    client = signed_in(member(st_mary, "sam"))
    for path in ("scorecard.json", "scorecard.csv"):
        assert client.get(f"/settings/statistics/{path}?practice=riverside").status_code == 404
    for path in ("scorecard", "scorecard.json", "scorecard.csv"):
        response = client.get(f"/registry/practices/riverside/{path}")
        assert response.status_code == 403
        assert b"12" not in response.content
    assert (
        signed_in(member(riverside, "rory"))
        .get("/registry/practices/riverside/scorecard")
        .status_code
        == 403
    )  # the practice's own staff read it under /settings/, not here


def test_the_registry_office_reads_any_practices_scorecard(riverside, superuser):
    sent(riverside, timezone.now().date(), 12, rejected=6)
    client = signed_in(superuser)
    page = client.get("/registry/practices/riverside/scorecard")
    assert page.status_code == 200
    assert b"Sent, rejected, warned and timely, by month" in page.content
    data = client.get("/registry/practices/riverside/scorecard.json").json()
    assert data["by_month"][0]["figures"]["rejected"]["practice"]["rate"] == 0.5
    assert client.get("/registry/practices/riverside/scorecard.csv").status_code == 200
    assert client.get("/registry/practices/nowhere/scorecard").status_code == 404


def test_the_statistics_page_shows_the_scorecard_and_the_years_compared(st_mary):
    from registry.models import BirthCount

    BirthCount.objects.create(practice=st_mary, birth_year=2024, group=ALL, births=4)
    sent(st_mary, timezone.now().date(), 7)
    page = signed_in(member(st_mary, "sam")).get("/settings/statistics/?practice=st-mary")
    html = page.content.decode()
    assert 'data-testid="scorecard"' in html
    assert "Complete, out of live-born children, by month" in html
    # The comparison states its years beside it, in each section that compares.
    for testid in ("benchmark-years", "quality-years"):
        start = html.index(f'data-testid="{testid}"')
        assert "The registry&#x27;s figures cover birth years 2024" in html[start : start + 200]


def test_the_beat_keeps_the_registry_totals_warm(django_assert_num_queries):
    """The beat's refresh reads the tables whatever the cache holds and caches the answer, so
    the page after it reads no registry total: a change shows after the next refresh."""
    _clinic, rest = busy_registry([timezone.now().date()])
    months = months_ending(timezone.now().date())
    before = registry_totals(months)
    received(rest[0], timezone.now().date() - timedelta(days=40), 5)
    with django_assert_num_queries(0):
        assert registry_totals(months) == before  # cached: the change is not seen yet
    with django_assert_num_queries(2):
        refresh_scorecard_totals()
    with django_assert_num_queries(0):
        after = registry_totals(months)
    assert after != before
