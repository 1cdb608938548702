"""What is kept of each child, and of the mother: masked values only."""

from __future__ import annotations

import pytest

from tests.fhir.builders import (
    FETUS_PROFILE,
    child,
    course_of,
    document,
    mother,
    only_child,
)


def one_child(**fields: object) -> object:
    return only_child(document(mother(), child(**fields)))


def mother_of(**fields: object) -> object:
    return course_of(document(mother(**fields), child()))


# children


def test_a_live_born_child_is_a_live_birth() -> None:
    assert one_child().outcome == "live_birth"  # type: ignore[attr-defined]


def test_a_fetus_profile_is_a_fetal_death() -> None:
    assert only_child(document(mother(), child(profile=FETUS_PROFILE))).outcome == "fetal_death"


@pytest.mark.parametrize(
    ("gender", "sex"),
    [("female", "female"), ("male", "male"), ("other", "other"), ("unknown", "unknown")],
)
def test_sex_is_the_gender(gender: str, sex: str) -> None:
    assert one_child(gender=gender).sex == sex  # type: ignore[attr-defined]


@pytest.mark.parametrize("gender", ["F", "Female", "", None, 1, ["female"]])
def test_an_unrecognised_gender_is_no_sex(gender: object) -> None:
    assert one_child(gender=gender).sex is None  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("birth_date", "year"),
    [("2024-03-09", 2024), ("2024-03", 2024), ("2024", 2024)],
)
def test_the_birth_year_comes_from_any_precision_of_birth_date(birth_date: str, year: int) -> None:
    assert one_child(birthDate=birth_date).birth_year == year  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "birth_date", ["2024-02-30", "2024-13", "24-03-09", "2024-03-09T10:00:00Z", "", None, 2024]
)
def test_an_invalid_birth_date_gives_no_birth_year(birth_date: object) -> None:
    assert one_child(birthDate=birth_date).birth_year is None  # type: ignore[attr-defined]


def test_birth_order_is_multiple_birth_integer_when_sane() -> None:
    bundle = document(
        mother(), child("a", multipleBirthInteger=2), child("b", multipleBirthInteger=1)
    )
    assert [found.birth_order for found in course_of(bundle).children] == [2, 1]


@pytest.mark.parametrize("value", [0, -1, 21, True, 1.5, "2", None])
def test_an_insane_multiple_birth_integer_falls_back_to_order_of_appearance(value: object) -> None:
    bundle = document(mother(), child("a"), child("b", multipleBirthInteger=value))
    assert [found.birth_order for found in course_of(bundle).children] == [1, 2]


def test_a_multiple_birth_boolean_is_not_an_order() -> None:
    assert one_child(multipleBirthBoolean=True).birth_order == 1  # type: ignore[attr-defined]


# the mother


def test_the_mother_age_is_whole_years_at_the_birth() -> None:
    assert mother_of(birthDate="1990-03-10").mother_age_years == 33  # type: ignore[attr-defined]
    assert mother_of(birthDate="1990-03-09").mother_age_years == 34  # type: ignore[attr-defined]


def test_the_mother_age_is_taken_at_the_earliest_birth() -> None:
    bundle = document(
        mother(birthDate="1990-03-09"),
        child("late", birthDate="2024-03-10"),
        child("early", birthDate="2024-03-08"),
    )
    assert course_of(bundle).mother_age_years == 33


@pytest.mark.parametrize("birth_date", ["1990", "1990-03", None, "garbage"])
def test_the_mother_age_needs_her_full_birth_date(birth_date: object) -> None:
    assert mother_of(birthDate=birth_date).mother_age_years is None  # type: ignore[attr-defined]


def test_the_mother_age_needs_a_full_child_birth_date() -> None:
    bundle = document(mother(), child(birthDate="2024"))
    assert course_of(bundle).mother_age_years is None


@pytest.mark.parametrize("birth_date", ["2020-01-01", "1940-01-01", "2030-01-01"])
def test_an_absurd_mother_age_is_dropped(birth_date: str) -> None:
    assert mother_of(birthDate=birth_date).mother_age_years is None  # type: ignore[attr-defined]


def test_the_postal_prefix_is_the_first_three_characters() -> None:
    assert mother_of().mother_postal_prefix == "841"  # type: ignore[attr-defined]


def test_the_postal_prefix_comes_from_the_first_address_with_a_postal_code() -> None:
    addresses = [{"city": "X"}, {"postalCode": " k1a 0b1 "}, {"postalCode": "99999"}]
    assert mother_of(address=addresses).mother_postal_prefix == "K1A"  # type: ignore[attr-defined]


@pytest.mark.parametrize("postal_code", ["841", "84", "", "  ", 84116, None, "-8411"])
def test_no_prefix_when_it_would_be_the_whole_code_or_is_not_a_code(postal_code: object) -> None:
    found = mother_of(address=[{"postalCode": postal_code}])
    assert found.mother_postal_prefix is None  # type: ignore[attr-defined]
