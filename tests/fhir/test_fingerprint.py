"""The duplicate fingerprint: keyed, per practice, over the folded name and the birth date."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from ingestion.fhir import map_single, practice_fingerprint_key
from tests.fhir.builders import KEY, child, course_of, document, mother

BIRTH_TIME = "http://hl7.org/fhir/StructureDefinition/patient-birthTime"


def fingerprint(*, name: object = None, key: bytes = KEY, **child_fields: object) -> str | None:
    mother_patient = mother() if name is None else mother(name=name)
    return course_of(document(mother_patient, child(**child_fields))).fingerprint


def official(family: object, *given: object, use: str = "official") -> list[dict]:
    return [{"use": use, "family": family, "given": list(given)}]


def test_the_fingerprint_is_hmac_sha256_of_family_given_and_birth_date() -> None:
    expected = hmac.new(KEY, b"quinn\x1fjadaann\x1f2024-03-09", hashlib.sha256).hexdigest()
    assert fingerprint() == expected


def test_the_same_mother_and_birth_date_give_the_same_fingerprint() -> None:
    assert fingerprint() == fingerprint()


def test_accents_case_spacing_and_punctuation_are_folded_away() -> None:
    plain = fingerprint(name=official("Fernandez-Lopez", "Maria", "Jose"))
    fancy = fingerprint(name=official("FERNÁNDEZ LÓPEZ", " maría ", "José."))
    assert plain == fancy


def test_family_and_given_are_kept_apart() -> None:
    assert fingerprint(name=official("Ab", "C")) != fingerprint(name=official("A", "Bc"))


def test_family_and_given_are_not_interchangeable() -> None:
    assert fingerprint(name=official("Quinn", "Jada")) != fingerprint(
        name=official("Jada", "Quinn")
    )


def test_the_official_name_is_preferred() -> None:
    names = [*official("King", "Jada", use="maiden"), *official("Quinn", "Jada", "Ann")]
    assert fingerprint(name=names) == fingerprint()


def test_without_an_official_name_the_first_name_is_used() -> None:
    names = [*official("Quinn", "Jada", "Ann", use="usual"), *official("King", "J", use="maiden")]
    assert fingerprint(name=names) == fingerprint()


def test_a_name_with_only_text_still_fingerprints() -> None:
    assert fingerprint(name=[{"text": "Jada Quinn"}]) is not None


@pytest.mark.parametrize(
    "name",
    [[], None, official("123", "--"), [{"use": "official"}], "Jada Quinn", official(7, None)],
)
def test_no_letters_in_the_name_means_no_fingerprint(name: object) -> None:
    bundle = document(mother(name=name), child())
    assert course_of(bundle).fingerprint is None


def test_a_different_birth_date_changes_the_fingerprint() -> None:
    assert fingerprint(birthDate="2024-03-09") != fingerprint(birthDate="2024-03-10")


def test_no_full_child_birth_date_means_no_fingerprint() -> None:
    assert fingerprint(birthDate="2024-03") is None


def test_the_birth_time_never_enters_the_fingerprint() -> None:
    timed = {"extension": [{"url": BIRTH_TIME, "valueDateTime": "2024-03-09T23:59:00-05:00"}]}
    assert fingerprint(_birthDate=timed) == fingerprint()


def test_the_birth_time_supplies_the_date_when_birth_date_is_missing() -> None:
    timed = {"extension": [{"url": BIRTH_TIME, "valueDateTime": "2024-03-09T13:00:00-07:00"}]}
    assert fingerprint(birthDate=None, _birthDate=timed) == fingerprint()


def test_the_earliest_newborn_birth_date_is_used() -> None:
    twins = document(
        mother(), child("a", birthDate="2024-03-10"), child("b", birthDate="2024-03-09")
    )
    assert course_of(twins).fingerprint == fingerprint(birthDate="2024-03-09")


def test_practices_get_different_fingerprints_for_the_same_birth() -> None:
    bundle = document(mother(), child())
    first = map_single(bundle, fingerprint_key=practice_fingerprint_key(b"master", 1))
    second = map_single(bundle, fingerprint_key=practice_fingerprint_key(b"master", 2))
    assert first.fingerprint != second.fingerprint  # type: ignore[union-attr]


def test_the_practice_key_is_an_hmac_of_the_practice_id_under_the_master_key() -> None:
    expected = hmac.new(b"master", b"registry-fingerprint/v1/practice/42", hashlib.sha256).digest()
    assert practice_fingerprint_key(b"master", 42) == expected


def test_an_empty_master_key_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        practice_fingerprint_key(b"", 1)


def test_the_fingerprint_is_hex_and_contains_nothing_readable() -> None:
    found = fingerprint()
    assert found is not None
    assert len(found) == 64
    assert set(found) <= set("0123456789abcdef")
