"""Attendance and transfers from Encounters (spec 2.4)."""

from __future__ import annotations

import pytest

from tests.fhir.builders import (
    course,
    course_of,
    encounter,
    entry,
    participant,
    practitioner,
    qualified,
)

V3 = "http://terminology.hl7.org/CodeSystem/v3-ParticipationType"
LOINC = "http://loinc.org"


def attendance(*resources: dict) -> tuple[tuple[str, ...], tuple[str, ...]]:
    result = course_of(course(*resources))
    return result.attended_by, result.present


def test_a_participant_typed_atnd_attends() -> None:
    assert attendance(practitioner("p1"), encounter(participant("Practitioner/p1", "ATND"))) == (
        ("p1",),
        (),
    )


@pytest.mark.parametrize("system", [V3, "urn:example:local", None])
def test_atnd_is_matched_regardless_of_the_coding_system(system: str | None) -> None:
    typed = participant("Practitioner/p1", "ATND", system=system)
    assert attendance(practitioner("p1"), encounter(typed))[0] == ("p1",)


def test_a_doula_listed_as_a_participant_is_present_not_attending() -> None:
    doula = qualified("d1", "Doula")
    assert attendance(doula, encounter(participant("Practitioner/d1", "PPRF"))) == ((), ("d1",))


def test_a_participant_without_a_type_is_present() -> None:
    assert attendance(practitioner("p1"), encounter(participant("Practitioner/p1"))) == (
        (),
        ("p1",),
    )


def test_the_bfdr_attendant_loinc_code_is_recorded_as_present_never_attending() -> None:
    marked = participant("Practitioner/p1", "87286-1", system=LOINC)
    assert attendance(practitioner("p1"), encounter(marked)) == ((), ("p1",))


def test_the_bfdr_attendant_role_extension_is_recorded_as_present_never_attending() -> None:
    marker = {
        "url": "http://hl7.org/fhir/us/bfdr/StructureDefinition/Extension-role",
        "valueCode": "attendant",
    }
    assert attendance(practitioner("p1", extension=[marker])) == ((), ("p1",))


def test_a_certifier_role_extension_is_not_presence() -> None:
    marker = {
        "url": "http://hl7.org/fhir/us/bfdr/StructureDefinition/Extension-role",
        "valueCode": "certifier",
    }
    assert attendance(practitioner("p1", extension=[marker])) == ((), ())


def test_a_practitioner_who_attends_is_not_also_listed_as_present() -> None:
    resources = (
        practitioner("p1"),
        encounter(participant("Practitioner/p1", "PPRF")),
        encounter(participant("Practitioner/p1", "ATND")),
    )
    assert attendance(*resources) == (("p1",), ())


@pytest.mark.parametrize(
    "reference",
    [
        "Practitioner/p1",
        "https://ehr.example.org/fhir/Practitioner/p1",
        "urn:uuid:midwife",  # the Practitioner entry's fullUrl
    ],
)
def test_a_participant_resolves_by_any_reference_form(reference: str) -> None:
    midwife = entry(practitioner("p1"), "urn:uuid:midwife")
    assert attendance(midwife, encounter(participant(reference, "ATND")))[0] == ("p1",)


def test_attendance_names_the_stable_id_not_the_resource_id() -> None:
    midwife = practitioner("p1", identifier=[{"value": "STAFF-7"}])
    assert attendance(midwife, encounter(participant("Practitioner/p1", "ATND")))[0] == ("STAFF-7",)


@pytest.mark.parametrize("reference", ["Practitioner/unknown", "Patient/mother-1", None, 5])
def test_an_unresolved_participant_is_ignored(reference: object) -> None:
    typed = {"type": [{"coding": [{"code": "ATND"}]}], "individual": {"reference": reference}}
    assert attendance(practitioner("p1"), encounter(typed)) == ((), ())


def test_a_skipped_practitioner_is_never_attributed() -> None:
    nameless = entry(practitioner(None), "urn:uuid:nameless")
    assert attendance(nameless, encounter(participant("urn:uuid:nameless", "ATND"))) == ((), ())


# transfers


def test_admit_source_hosp_trans_is_a_maternal_transfer_in() -> None:
    result = course_of(course(encounter(admit_source="hosp-trans")))
    assert result.transfers == ("maternal_transfer_in",)


def test_discharge_disposition_other_hcf_is_an_infant_transfer_out() -> None:
    result = course_of(course(encounter(discharge_disposition="other-hcf")))
    assert result.transfers == ("infant_transfer_out",)


@pytest.mark.parametrize(("admit", "discharge"), [("other", "home"), ("emd", "oth"), (None, None)])
def test_other_hospitalization_codes_are_no_transfer(
    admit: str | None, discharge: str | None
) -> None:
    found = course_of(course(encounter(admit_source=admit, discharge_disposition=discharge)))
    assert found.transfers == ()


def test_each_transfer_kind_is_recorded_once() -> None:
    resources = (encounter(admit_source="hosp-trans"), encounter(admit_source="hosp-trans"))
    assert course_of(course(*resources)).transfers == ("maternal_transfer_in",)


def test_the_participants_of_a_transfer_encounter_are_present_even_if_typed_atnd() -> None:
    transfer = encounter(participant("Practitioner/p1", "ATND"), admit_source="hosp-trans")
    assert attendance(practitioner("p1"), transfer) == ((), ("p1",))


def test_attendance_in_another_encounter_is_unaffected_by_a_transfer() -> None:
    resources = (
        practitioner("p1"),
        practitioner("p2"),
        encounter(participant("Practitioner/p1", "ATND")),
        encounter(participant("Practitioner/p2", "ATND"), discharge_disposition="other-hcf"),
    )
    assert attendance(*resources) == (("p1",), ("p2",))
