"""Data-quality figures: completeness, plausibility and timeliness, beside the registry."""

from __future__ import annotations

import csv
import io

import pytest

from registry.models import Child, Provider
from registry.statistics.quality import PATHS
from registry.statistics.selectors import benchmarks_for_practice
from tests.registry.factories import PracticeFactory, birth

pytestmark = pytest.mark.django_db

MIDWIFE = Provider.Role.MIDWIFE
OTHER = Provider.Role.OTHER
GOOD = {
    "attended_by": (MIDWIFE,),
    "consent_decided": True,
    "timeliness": "days_0_5",
}


def others(number: int, *, births: int = 4, **fields):
    """``number`` other practices, each with ``births`` complete, plausible, prompt births."""
    practices = [PracticeFactory() for _ in range(number)]
    for practice in practices:
        for _ in range(births):
            birth(practice, **(GOOD | fields))
    return practices


def st_marys_three(practice):
    """A complete prompt birth, an incomplete late one with a warning, a fetal death."""
    birth(practice, attended_by=(OTHER,), consent_decided=True, timeliness="days_0_5")
    birth(
        practice,
        child__birth_weight_grams=None,
        child__apgar_5=None,
        drew_warning=True,
        timeliness="days_6_10",
    )
    birth(practice, child__outcome=Child.Outcome.FETAL_DEATH, timeliness=None)


def quality(practice, **years):
    return benchmarks_for_practice(practice=practice, **years)["data_quality"]


def side(figure, source="practice"):
    found = figure[source]
    return (found["numerator"], found["denominator"])


def test_the_figures_on_known_data(st_mary):
    others(3)
    st_marys_three(st_mary)
    found = quality(st_mary)
    completeness = found["completeness"]
    assert set(completeness) == {
        "birth_weight",
        "gestational_age",
        "apgar_5",
        "attending_provider",
        "consent_decision",
    }
    assert completeness["birth_weight"]["practice"] == {
        "rate": 0.5,
        "numerator": 1,
        "denominator": 2,  # live births: the fetal death is not counted
        "unreliable": True,
    }
    assert side(completeness["gestational_age"]) == (2, 2)
    assert side(completeness["apgar_5"]) == (1, 2)
    assert side(completeness["attending_provider"]) == (1, 2)  # role "other" attends too
    assert side(completeness["consent_decision"]) == (1, 2)
    assert side(found["plausibility"]) == (1, 3)  # records
    assert side(found["timeliness"]["within_5_days"]) == (1, 2)  # records with a known delay
    assert side(found["timeliness"]["within_10_days"]) == (2, 2)

    assert completeness["birth_weight"]["registry"] == {
        "rate": round(13 / 14, 4),
        "numerator": 13,
        "denominator": 14,
        "practices": 4,
        "unreliable": True,
    }
    assert side(completeness["attending_provider"], "registry") == (13, 14)
    assert side(found["plausibility"], "registry") == (1, 15)  # others' 0 warnings: shown
    assert side(found["timeliness"]["within_5_days"], "registry") == (13, 14)
    assert side(found["timeliness"]["within_10_days"], "registry") == (14, 14)


def test_the_registry_side_needs_three_other_practices(st_mary):
    others(2, births=10)
    st_marys_three(st_mary)
    for path, _ in PATHS:
        figure = quality(st_mary)
        for key in path.split(".")[1:]:
            figure = figure[key]
        assert figure["registry"] == {"suppressed": "Fewer than three other practices contribute."}
        assert "rate" in figure["practice"]


def test_other_practices_few_warnings_are_suppressed(st_mary):
    practices = others(3)
    birth(practices[0], drew_warning=True, **GOOD)  # one warning among 13 other records
    st_marys_three(st_mary)
    found = quality(st_mary)
    assert "between 1 and 9" in found["plausibility"]["registry"]["suppressed"]
    assert side(found["plausibility"]) == (1, 3)  # the practice's own figure is always shown
    assert "rate" in found["completeness"]["birth_weight"]["registry"]


def test_a_year_range_leaves_out_other_years_and_unknown_ones(st_mary):
    others(3, birth_year=2023)
    others(3, birth_year=None)
    birth(st_mary, birth_year=2023, **GOOD)
    birth(st_mary, birth_year=2024, drew_warning=True, **GOOD)
    assert side(quality(st_mary)["plausibility"]) == (1, 2)
    in_2023 = quality(st_mary, year_from=2023, year_to=2023)["plausibility"]
    assert side(in_2023) == (0, 1)
    assert side(in_2023, "registry") == (0, 13)
    unknown_years = quality(st_mary)["plausibility"]["registry"]
    assert "without a known year" not in unknown_years.get("suppressed", "")


def test_the_json_and_csv_carry_the_data_quality_figures(st_mary, staff):
    from tests.registry.conftest import signed_in

    others(3)
    st_marys_three(st_mary)
    client = signed_in(staff)
    data = client.get("/settings/statistics.json").json()
    assert data["data_quality"]["completeness"]["apgar_5"]["practice"]["numerator"] == 1
    assert data["data_quality"]["timeliness"]["within_10_days"]["registry"]["denominator"] == 14
    assert data["definitions"]["data_quality.plausibility"]["denominator"].startswith("births")
    rows = list(
        csv.DictReader(io.StringIO(client.get("/settings/statistics.csv").content.decode()))
    )
    quality_rows = [row for row in rows if row["figure"].startswith("data_quality.")]
    assert {row["figure"] for row in quality_rows} == {path for path, _ in PATHS}
    practice_row = next(
        row
        for row in quality_rows
        if (row["figure"], row["source"]) == ("data_quality.plausibility", "practice")
    )
    assert (practice_row["group"], practice_row["numerator"], practice_row["denominator"]) == (
        "all",
        "1",
        "3",
    )
    registry_row = next(
        row
        for row in quality_rows
        if (row["figure"], row["source"]) == ("data_quality.completeness.birth_weight", "registry")
    )
    assert (registry_row["numerator"], registry_row["practices"]) == ("13", "4")
