"""Benchmarks: each figure of a role, the practice beside the registry, and what is suppressed."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User

from registry.models import Child, Provider, Record
from registry.review.services import record_merge, record_void
from registry.statistics.benchmarks import FIGURES
from registry.statistics.selectors import benchmarks_for_practice
from tests.registry.factories import PracticeFactory, birth

pytestmark = pytest.mark.django_db

MIDWIFE, DOULA, OTHER = Provider.Role.MIDWIFE, Provider.Role.DOULA, Provider.Role.OTHER


def others(number: int, *, births: int = 5, year: int | None = 2024, role=MIDWIFE, **fields):
    """``number`` other practices, each with ``births`` births of ``role`` in ``year``."""
    practices = [PracticeFactory() for _ in range(number)]
    for practice in practices:
        for _ in range(births):
            birth(practice, birth_year=year, attended_by=(role,), **fields)
    return practices


def risky(practice, *, year: int | None = 2024, role=MIDWIFE, **fields):
    """A birth counted in every numerator: low weight, preterm, low Apgar, consent granted."""
    return birth(
        practice,
        birth_year=year,
        attended_by=(role,),
        child__birth_weight_grams=2000,
        child__gestational_age_weeks=34,
        child__apgar_5=4,
        consent_granted=True,
        **fields,
    )


def compared(practice, **years):
    return benchmarks_for_practice(practice=practice, **years)


def test_every_figure_of_a_role_stands_beside_the_registrys(st_mary):
    for practice in others(4, births=0):
        for _ in range(4):
            risky(practice)
        birth(
            practice, attended_by=(MIDWIFE,), child__birth_weight_grams=3000, consent_granted=False
        )
    risky(st_mary)
    birth(st_mary, attended_by=(DOULA,))
    midwife = compared(st_mary)["benchmarks"]["midwife"]
    assert set(midwife) == {figure.name for figure in FIGURES}
    assert midwife["births"]["practice"] == {
        "rate": 0.5,
        "numerator": 1,
        "denominator": 2,
        "unreliable": True,
    }
    assert midwife["births"]["registry"] == {
        "rate": round(21 / 22, 4),
        "numerator": 21,
        "denominator": 22,
        "practices": 5,
        "unreliable": False,
    }
    low = midwife["low_birth_weight"]
    assert low["practice"] == {"rate": 1.0, "numerator": 1, "denominator": 1, "unreliable": True}
    assert (low["registry"]["numerator"], low["registry"]["denominator"]) == (17, 21)
    for name in ("preterm", "apgar5_below_7"):  # the other child's values are the factory's
        registry = midwife[name]["registry"]
        assert (registry["numerator"], registry["denominator"]) == (17, 21)
    consent = midwife["consent_granted"]["registry"]
    assert (consent["numerator"], consent["denominator"], consent["practices"]) == (17, 21, 5)


def test_a_registry_figure_needs_three_other_practices(st_mary):
    others(2, births=10)
    risky(st_mary)
    registry = compared(st_mary)["benchmarks"]["midwife"]["births"]["registry"]
    assert registry == {"suppressed": "Fewer than three other practices contribute."}
    assert compared(st_mary)["benchmarks"]["midwife"]["births"]["practice"]["numerator"] == 1


def test_other_practices_part_between_1_and_9_is_suppressed(st_mary):
    for practice in others(3, births=4):
        risky(practice)  # 3 low-weight children among 15 with a known weight
    midwife = compared(st_mary)["benchmarks"]["midwife"]
    assert "between 1 and 9" in midwife["low_birth_weight"]["registry"]["suppressed"]
    assert midwife["births"]["registry"]["numerator"] == 15  # 15 births: shown


def test_a_year_range_compares_only_the_years_that_isolate_no_practice(st_mary):
    others(3, births=4, year=2024)  # 12 births in 2024 from three practices
    lone = PracticeFactory()
    for _ in range(12):
        birth(lone, birth_year=2023, attended_by=(MIDWIFE,))  # 2023: one practice alone
    risky(st_mary, year=2024)
    births = compared(st_mary, year_from=2024, year_to=2024)["benchmarks"]["midwife"]["births"]
    assert births["registry"]["numerator"] == 13
    # 2023-2024 minus 2024 would be the lone practice's 2023 births: 2023 is left out, so
    # every range shows the same figure, over 2024 alone.
    ranges = [
        ({}, [2023]),
        ({"year_from": 2023, "year_to": 2024}, [2023]),
        ({"year_to": 2024}, [2023]),
        ({"year_from": 2024}, []),
    ]
    for years, left_out in ranges:
        result = compared(st_mary, **years)
        assert result["benchmarks"]["midwife"]["births"]["registry"]["numerator"] == 13, years
        assert result["compared_years"]["included"] == [2024]
        assert result["compared_years"]["left_out"] == left_out
    alone = compared(st_mary, year_from=2023, year_to=2023)
    assert alone["compared_years"] == {  # no year passes: the range as asked
        "included": [2023],
        "left_out": [],
        "unknown_year_left_out": False,
    }
    assert "suppressed" in alone["benchmarks"]["midwife"]["births"]["registry"]


def test_one_thin_year_from_another_practice_leaves_the_default_view_its_figures(st_mary):
    for practice in others(4, births=5, year=2024):
        for _ in range(3):
            risky(practice, year=2025)
    birth(PracticeFactory(), birth_year=2023, attended_by=(MIDWIFE,))  # a late registration
    risky(st_mary, year=2024)
    birth(st_mary, birth_year=2023, attended_by=(MIDWIFE,))
    result = compared(st_mary)
    assert result["compared_years"] == {
        "included": [2024, 2025],
        "left_out": [2023],
        "unknown_year_left_out": False,
    }
    for name, figure in result["headline"].items():
        assert "suppressed" not in figure["registry"], name
    preterm = result["headline"]["preterm"]
    assert (preterm["registry"]["numerator"], preterm["registry"]["denominator"]) == (13, 33)
    # The practice's own side covers every year of the range, 2023 included (issue 32).
    assert (preterm["practice"]["numerator"], preterm["practice"]["denominator"]) == (1, 2)
    assert result["benchmarks"]["midwife"]["births"]["registry"]["numerator"] == 33


def test_few_births_without_a_known_year_leave_them_out_of_the_comparisons(st_mary):
    others(3, births=4, year=2024)
    birth(PracticeFactory(), birth_year=None, attended_by=(MIDWIFE,))
    risky(st_mary)
    all_years = compared(st_mary)
    assert all_years["compared_years"]["unknown_year_left_out"] is True
    assert all_years["benchmarks"]["midwife"]["births"]["registry"]["numerator"] == 13
    ranged = compared(st_mary, year_from=2000)["benchmarks"]["midwife"]["births"]["registry"]
    assert ranged["numerator"] == 13


def test_role_other_is_never_benchmarked(st_mary):
    others(4, births=5, role=OTHER)
    benchmarks = compared(st_mary)["benchmarks"]
    assert set(benchmarks) == {"midwife", "doula", "nurse", "assistant"}
    assert "suppressed" in benchmarks["midwife"]["births"]["registry"]  # no midwife births


def test_voided_and_merged_away_records_leave_the_registry_at_once(st_mary):
    practices = others(3, births=5)
    risky(st_mary)
    before = compared(st_mary)["benchmarks"]["midwife"]["births"]["registry"]["numerator"]
    assert before == 16
    root = User.objects.create_superuser("root-bench", password="x")
    first, second, survivor, *_ = Record.objects.filter(practice=practices[0]).order_by("id")
    record_void(record=first, by=root)
    record_merge(record=second, survivor=survivor, by=root)
    after = compared(st_mary)["benchmarks"]["midwife"]["births"]["registry"]
    assert after["numerator"] == 14
    birth(practices[1], voided=True, attended_by=(MIDWIFE,))
    assert compared(st_mary)["benchmarks"]["midwife"]["births"]["registry"]["numerator"] == 14


def test_the_trend_compares_each_birth_year_and_suppresses_the_same_way(st_mary):
    for year in (2022, 2023):
        for practice in others(3, births=4, year=year, child__birth_weight_grams=2000):
            birth(practice, birth_year=year, attended_by=(MIDWIFE,))
    lone = PracticeFactory()
    for _ in range(12):
        birth(lone, birth_year=2024, attended_by=(MIDWIFE,))
    risky(st_mary, year=2023)
    points = compared(st_mary)["trend"]["midwife"]["low_birth_weight"]
    assert [point["year"] for point in points] == [2022, 2023, 2024]
    by_year = {point["year"]: point for point in points}
    assert by_year[2022]["registry"]["numerator"] == 12
    assert by_year[2022]["registry"]["denominator"] == 15
    assert by_year[2023]["practice"] == {
        "rate": 1.0,
        "numerator": 1,
        "denominator": 1,
        "unreliable": True,
    }
    assert by_year[2023]["registry"]["numerator"] == 13
    assert "suppressed" in by_year[2024]["registry"]
    assert set(compared(st_mary)["trend"]["midwife"]) >= {"low_birth_weight", "preterm"}


def test_a_registry_figure_says_unreliable_under_20(st_mary):
    others(3, births=4)
    risky(st_mary)
    registry = compared(st_mary)["benchmarks"]["midwife"]["births"]["registry"]
    assert (registry["denominator"], registry["unreliable"]) == (13, True)
    others(3, births=4)
    registry = compared(st_mary)["benchmarks"]["midwife"]["births"]["registry"]
    assert (registry["denominator"], registry["unreliable"]) == (25, False)


def test_the_benchmarks_take_two_queries(st_mary, django_assert_num_queries):
    others(3, births=4, child__outcome=Child.Outcome.LIVE_BIRTH)
    with django_assert_num_queries(2):
        compared(st_mary, year_from=2020, year_to=2025)


# -- JSON and CSV -------------------------------------------------------------------------------


def test_the_json_and_csv_carry_the_benchmarks_and_the_trend(st_mary, staff):
    from tests.registry.conftest import signed_in

    others(3, births=4)
    risky(st_mary)
    client = signed_in(staff)
    data = client.get("/settings/statistics.json?from=2024&to=2024").json()
    assert data["benchmarks"]["midwife"]["births"]["registry"]["numerator"] == 13
    assert data["benchmarks"]["doula"]["births"]["registry"]["suppressed"]
    assert data["trend"]["midwife"]["preterm"][0]["year"] == 2024
    assert data["births"] == 1  # the practice's own figures as before
    rows = list(
        csv.DictReader(io.StringIO(client.get("/settings/statistics.csv").content.decode()))
    )
    registry = next(
        row
        for row in rows
        if (row["group"], row["figure"], row["source"])
        == ("midwife", "benchmark.births", "registry")
    )
    assert (registry["numerator"], registry["denominator"], registry["practices"]) == (
        "13",
        "13",
        "4",
    )
    assert registry["unreliable"] == "true"
    doula = next(
        row
        for row in rows
        if (row["group"], row["figure"], row["source"]) == ("doula", "benchmark.births", "registry")
    )
    assert doula["suppressed"].startswith("Fewer than three")
    assert any(row["figure"] == "trend.low_birth_weight" and row["year"] == "2024" for row in rows)


def test_the_json_and_csv_say_which_years_they_compare(st_mary, staff):
    from tests.registry.conftest import signed_in

    others(4, births=5, year=2024)
    birth(PracticeFactory(), birth_year=2023, attended_by=(MIDWIFE,))  # a late registration
    risky(st_mary)
    client = signed_in(staff)
    data = client.get("/settings/statistics.json").json()
    assert data["compared_years"] == {
        "included": [2024],
        "left_out": [2023],
        "unknown_year_left_out": False,
    }
    assert data["headline"]["preterm"]["registry"]["denominator"] == 21
    rows = list(
        csv.DictReader(io.StringIO(client.get("/settings/statistics.csv").content.decode()))
    )
    years = {(row["value"], row["year"]) for row in rows if row["figure"] == "compared_year"}
    assert years == {("included", "2024"), ("left_out", "2023")}
    headline = next(
        row for row in rows if (row["figure"], row["source"]) == ("headline.preterm", "registry")
    )
    assert (headline["denominator"], headline["practices"]) == ("21", "5")
    page = client.get("/settings/statistics/").content.decode()
    assert "Left out: 2023" in page


def test_a_practice_sees_all_of_its_own_figures_when_the_comparison_leaves_a_year_out(
    st_mary, staff
):
    from tests.registry.conftest import signed_in

    others(4, births=5, year=2024)
    birth(PracticeFactory(), birth_year=2023, attended_by=(MIDWIFE,))  # a late registration
    risky(st_mary, year=2023)
    risky(st_mary, year=2024)
    birth(st_mary, birth_year=2024, attended_by=(MIDWIFE,))
    client = signed_in(staff)
    data = client.get("/settings/statistics.json").json()
    assert data["compared_years"]["left_out"] == [2023]
    for name, sides in data["headline"].items():
        own = sides["practice"]
        assert (own["numerator"], own["denominator"]) == tuple(data[name].values()), name
    assert data["preterm"] == {"numerator": 2, "denominator": 3}
    plausibility = data["data_quality"]["plausibility"]["practice"]
    assert plausibility["denominator"] == data["births"] == 3
    weight = data["data_quality"]["completeness"]["birth_weight"]["practice"]
    assert (weight["numerator"], weight["denominator"]) == (3, 3)
    page = client.get("/settings/statistics/").content.decode()
    assert "2 of 3" in page and "figures cover birth years 2024" in page
