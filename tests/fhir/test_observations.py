"""Birth weight, gestational age and Apgar scores: matched by LOINC code, linked to the child."""

from __future__ import annotations

import math

import pytest

from tests.fhir.builders import (
    child,
    course,
    course_of,
    document,
    entry,
    mother,
    observation,
    only_child,
    quantity,
    weight,
)


def gestation(
    value: object, code: str | None = "wk", loinc: str = "11884-4", **fields: object
) -> dict:
    return observation(loinc, valueQuantity=quantity(value, code), **fields)


def apgar(loinc: str, **value: object) -> dict:
    return observation(loinc, **value)


# birth weight


@pytest.mark.parametrize(
    ("value", "unit", "grams"),
    [
        (3400, "g", 3400),
        (3.41, "kg", 3410),
        (7.5, "[lb_av]", 3402),
        (120, "[oz_av]", 3402),
        (3400.5, "g", 3401),  # halves round up
    ],
)
def test_a_birth_weight_is_converted_to_whole_grams(value: float, unit: str, grams: int) -> None:
    assert only_child(course(weight(value, unit))).birth_weight_grams == grams


def test_the_weight_unit_may_come_from_the_human_unit_when_the_code_is_absent() -> None:
    obs = observation("8339-4", valueQuantity=quantity(2.5, unit="kg"))
    assert only_child(course(obs)).birth_weight_grams == 2500


def test_a_weight_without_any_unit_is_read_as_grams() -> None:
    assert only_child(course(weight(3100, None))).birth_weight_grams == 3100


def test_a_weight_in_an_unknown_unit_is_dropped() -> None:
    assert only_child(course(weight(3100, "stone"))).birth_weight_grams is None


@pytest.mark.parametrize(
    "value",
    [0, 0.4, -5, 10000, 12.5e3, "3400", True, None, math.nan, math.inf, 10**30, [3400], {}],
)
def test_an_implausible_or_non_numeric_weight_is_dropped(value: object) -> None:
    assert only_child(course(weight(value))).birth_weight_grams is None


def test_a_weight_with_a_data_absent_extension_instead_of_a_value_is_dropped() -> None:
    absent = {"extension": [{"url": "http://hl7.org/fhir/StructureDefinition/data-absent-reason"}]}
    obs = observation("8339-4", valueQuantity=absent)
    assert only_child(course(obs)).birth_weight_grams is None


def test_an_observation_is_matched_by_code_without_a_profile() -> None:
    obs = weight(3000)
    assert "meta" not in obs
    assert only_child(course(obs)).birth_weight_grams == 3000


def test_an_observation_coded_in_another_system_is_not_a_birth_weight() -> None:
    obs = weight(3000)
    obs["code"]["coding"][0]["system"] = "http://snomed.info/sct"
    assert only_child(course(obs)).birth_weight_grams is None


def test_a_loinc_coding_without_a_system_is_matched() -> None:
    obs = weight(3000)
    del obs["code"]["coding"][0]["system"]
    assert only_child(course(obs)).birth_weight_grams == 3000


def test_the_first_plausible_weight_wins() -> None:
    found = only_child(course(weight(-1), weight(3200), weight(3300)))
    assert found.birth_weight_grams == 3200


# gestational age


@pytest.mark.parametrize(
    ("value", "code", "weeks", "days"),
    [
        (39, "wk", 39, 0),
        (39.5, "wk", 39, 4),  # 276.5 days rounds up to 277
        (275, "d", 39, 2),
        (1, "wk", 1, 0),
        (50, "wk", 50, 0),
    ],
)
def test_gestational_age_is_weeks_and_days(value: float, code: str, weeks: int, days: int) -> None:
    found = only_child(course(gestation(value, code)))
    assert (found.gestational_age_weeks, found.gestational_age_days) == (weeks, days)


@pytest.mark.parametrize("loinc", ["11884-4", "18185-9", "49051-6"])
def test_each_gestational_age_code_is_recognised(loinc: str) -> None:
    assert only_child(course(gestation(38, loinc=loinc))).gestational_age_weeks == 38


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (0, "wk"),
        (51, "wk"),
        (50.2, "wk"),
        (3, "d"),
        (-2, "wk"),
        (38, None),
        (38, "mo"),
        (True, "wk"),
    ],
)
def test_an_implausible_gestational_age_is_dropped(value: object, code: str | None) -> None:
    found = only_child(course(gestation(value, code)))
    assert (found.gestational_age_weeks, found.gestational_age_days) == (None, None)


# Apgar


@pytest.mark.parametrize(
    ("loinc", "field"), [("9272-6", "apgar_1"), ("9274-2", "apgar_5"), ("9271-8", "apgar_10")]
)
def test_each_apgar_score_is_read_from_a_score_quantity(loinc: str, field: str) -> None:
    found = only_child(course(apgar(loinc, valueQuantity=quantity(8, "{score}"))))
    assert getattr(found, field) == 8


def test_an_apgar_score_may_be_a_value_integer() -> None:
    assert only_child(course(apgar("9274-2", valueInteger=9))).apgar_5 == 9


def test_an_apgar_score_of_zero_is_kept() -> None:
    assert only_child(course(apgar("9272-6", valueInteger=0))).apgar_1 == 0


@pytest.mark.parametrize("value", [11, -1, 7.5, True, "8", math.nan, None])
def test_an_implausible_apgar_score_is_dropped(value: object) -> None:
    assert only_child(course(apgar("9272-6", valueInteger=value))).apgar_1 is None


# linking to the child


@pytest.mark.parametrize(
    "subject",
    [
        "Patient/child-1",
        "http://ehr.example.org/fhir/Patient/child-1",
        "http://ehr.example.org/fhir/Patient/child-1/_history/3",
        "urn:uuid:entry-2",  # the child entry's fullUrl, as the builders assign it
    ],
)
def test_an_observation_links_to_the_child_by_any_reference_form(subject: str) -> None:
    assert only_child(course(weight(3000, subject=subject))).birth_weight_grams == 3000


def test_an_observation_about_the_mother_is_ignored() -> None:
    found = only_child(course(weight(3000, subject="Patient/mother-1")))
    assert found.birth_weight_grams is None


@pytest.mark.parametrize("subject", ["Patient/nobody", "", None, 42])
def test_an_unlinked_observation_is_ignored(subject: object) -> None:
    obs = weight(3000)
    obs["subject"] = {"reference": subject}
    assert only_child(course(obs)).birth_weight_grams is None


def test_each_twin_gets_its_own_observations() -> None:
    bundle = document(
        mother(),
        entry(child("a"), "urn:uuid:a"),
        entry(child("b"), "urn:uuid:b"),
        weight(2400, subject="urn:uuid:b"),
        weight(2600, subject="Patient/a"),
    )
    first, second = course_of(bundle).children
    assert (first.birth_weight_grams, second.birth_weight_grams) == (2600, 2400)


# gestational age recorded against the mother (gestational age at delivery)


def test_a_gestational_age_about_the_mother_applies_to_each_child() -> None:
    bundle = document(
        mother(),
        entry(child("a"), "urn:uuid:a"),
        entry(child("b"), "urn:uuid:b"),
        gestation(35, subject="Patient/mother-1"),
    )
    first, second = course_of(bundle).children
    assert (first.gestational_age_weeks, second.gestational_age_weeks) == (35, 35)


def test_a_childs_own_gestational_age_wins_over_the_mothers() -> None:
    found = only_child(
        course(gestation(35, subject="Patient/mother-1"), gestation(37, subject="Patient/child-1"))
    )
    assert found.gestational_age_weeks == 37


def test_only_gestational_age_is_taken_from_the_mother() -> None:
    found = only_child(course(apgar("9274-2", valueInteger=8, subject="Patient/mother-1")))
    assert found.apgar_5 is None
