"""Providers from Practitioners (spec 2.3): stable id, NPI, role, name and credentials."""

from __future__ import annotations

import pytest

from ingestion.fhir import Provider
from tests.fhir.builders import NPI, course, course_of, practitioner, qualified


def provider(resource: dict) -> Provider:
    (found,) = course_of(course(resource)).providers
    return found


def npi_identifier(value: str = "1234567893") -> dict:
    return {"system": NPI, "value": value}


def typed_npi_identifier(value: str = "1234567893") -> dict:
    return {"type": {"coding": [{"code": "NPI"}]}, "system": "urn:example:other", "value": value}


# stable id and NPI


def test_the_stable_id_is_the_first_identifier_that_is_not_an_npi() -> None:
    identifiers = [
        npi_identifier(),
        {"system": "urn:example:staff", "value": "STAFF-7"},
        {"system": "urn:example:other", "value": "OTHER-9"},
    ]
    found = provider(practitioner("p1", identifier=identifiers))
    assert (found.stable_id, found.npi) == ("STAFF-7", "1234567893")


def test_an_identifier_typed_npi_is_an_npi_whatever_its_system() -> None:
    identifiers = [typed_npi_identifier(), {"value": "STAFF-7"}]
    found = provider(practitioner("p1", identifier=identifiers))
    assert (found.stable_id, found.npi) == ("STAFF-7", "1234567893")


def test_the_npi_is_never_the_key_the_resource_id_is() -> None:
    found = provider(practitioner("practitioner-9", identifier=[npi_identifier()]))
    assert (found.stable_id, found.npi) == ("practitioner-9", "1234567893")


def test_a_practitioner_with_neither_identifier_nor_id_is_skipped() -> None:
    resource = practitioner(None, identifier=[npi_identifier()], name=[{"text": "Ann Lee"}])
    assert course_of(course(resource)).providers == ()


@pytest.mark.parametrize("value", ["", "   ", None, 12, ["x"], "x" * 201])
def test_an_unusable_identifier_value_falls_back_to_the_resource_id(value: object) -> None:
    found = provider(practitioner("p1", identifier=[{"value": value}]))
    assert found.stable_id == "p1"


@pytest.mark.parametrize("value", ["STAFF\x00-7", "STAFF-\ud800"])
def test_a_stable_id_with_unstorable_characters_falls_back_to_the_resource_id(value: str) -> None:
    assert provider(practitioner("p1", identifier=[{"value": value}])).stable_id == "p1"


def test_an_npi_longer_than_twenty_characters_is_not_kept() -> None:
    found = provider(practitioner("p1", identifier=[npi_identifier("1" * 21)]))
    assert found.npi is None


def test_control_characters_are_dropped_from_names() -> None:
    found = provider(practitioner("p1", name=[{"text": "Ann\x00 Lee\ud800"}]))
    assert found.display_name == "Ann Lee"


def test_the_stable_id_is_stripped() -> None:
    assert provider(practitioner("  p1  ")).stable_id == "p1"


def test_a_provider_has_no_npi_when_none_is_sent() -> None:
    assert provider(practitioner("p1")).npi is None


def test_providers_are_deduplicated_by_stable_id() -> None:
    first = practitioner("a", identifier=[{"value": "SAME"}], name=[{"text": "First"}])
    second = practitioner("b", identifier=[{"value": "SAME"}], name=[{"text": "Second"}])
    (found,) = course_of(course(first, second)).providers
    assert (found.stable_id, found.display_name) == ("SAME", "First")


# role


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("Midwife", "midwife"),
        ("Certified Nurse Midwife", "midwife"),
        ("Nurse-Midwife", "midwife"),
        ("CNM", "midwife"),
        ("cpm", "midwife"),
        ("LM (licensed)", "midwife"),
        ("Birth doula", "doula"),
        ("Registered Nurse", "nurse"),
        ("RN", "nurse"),
        ("Medical assistant", "assistant"),
        ("Obstetrician", "other"),
        ("Osteopath", "other"),
        ("Nursery staff", "other"),  # whole words only
        ("Midwifery student", "other"),
        ("Elm tree", "other"),
    ],
)
def test_the_role_is_matched_by_keyword_in_table_order(text: str, role: str) -> None:
    assert provider(qualified("p1", text)).role == role


def test_a_certified_nurse_midwife_is_a_midwife() -> None:
    assert provider(qualified("p1", "Certified Nurse Midwife")).role == "midwife"


def test_a_coding_display_names_the_role_too() -> None:
    coding = {"coding": [{"system": "http://snomed.info/sct", "code": "x", "display": "Doula"}]}
    assert provider(practitioner("p1", qualification=[{"code": coding}])).role == "doula"


def test_the_table_order_decides_across_qualifications() -> None:
    qualifications = [{"code": {"text": "Nurse"}}, {"code": {"text": "Midwife"}}]
    assert provider(practitioner("p1", qualification=qualifications)).role == "midwife"


def test_a_practitioner_without_qualification_is_other() -> None:
    assert provider(practitioner("p1")).role == "other"


# display name and credentials


def test_the_display_name_is_the_name_text() -> None:
    found = provider(practitioner("p1", name=[{"text": "Grace  Okafor", "family": "X"}]))
    assert found.display_name == "Grace Okafor"


def test_without_text_the_display_name_is_given_then_family() -> None:
    found = provider(practitioner("p1", name=[{"family": "Okafor", "given": ["Grace", "A."]}]))
    assert found.display_name == "Grace A. Okafor"


def test_credentials_are_the_name_suffixes() -> None:
    name = [{"text": "Grace Okafor", "suffix": ["CNM", "MSN"]}]
    found = provider(qualified("p1", "Certified Nurse Midwife", name=name))
    assert found.credentials == "CNM, MSN"


def test_without_suffixes_credentials_are_the_qualification_text() -> None:
    assert provider(qualified("p1", "Certified Nurse Midwife")).credentials == (
        "Certified Nurse Midwife"
    )


def test_a_practitioner_without_name_has_empty_display_name_and_credentials() -> None:
    found = provider(practitioner("p1"))
    assert (found.display_name, found.credentials) == ("", "")


def test_display_name_and_credentials_are_capped_at_200_characters() -> None:
    name = [{"text": "A" * 5000, "suffix": ["B" * 5000]}]
    found = provider(practitioner("p1", name=name))
    assert (len(found.display_name), len(found.credentials)) == (200, 200)


def test_junk_in_name_and_qualification_is_ignored() -> None:
    resource = practitioner(
        "p1", name=[{"given": [1, None, "Ann"], "suffix": [{}]}], qualification=7
    )
    found = provider(resource)
    assert (found.display_name, found.credentials, found.role) == ("Ann", "", "other")
