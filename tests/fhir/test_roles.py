"""Roles come from Patient.meta.profile: exactly one mother, at least one child."""

from __future__ import annotations

import pytest

from tests.fhir.builders import (
    BFDR,
    CHILD_PROFILE,
    FETUS_PROFILE,
    MOTHER_PROFILE,
    child,
    composition,
    course_of,
    document,
    issues,
    mother,
    rejection_of,
)


def with_profile(profile: object) -> dict:
    return mother(meta={"profile": [profile]})


@pytest.mark.parametrize(
    "profile",
    [
        MOTHER_PROFILE,
        "http://build.fhir.org/ig/HL7/vr-common-library/StructureDefinition-Patient-mother-vr",
        "http://build.fhir.org/ig/HL7/vr-common-library/StructureDefinition-Patient-mother-vr.html",
        "Patient-Mother-VR",
        "http://example.org/StructureDefinition/PatientMaternal",
        f"{MOTHER_PROFILE}|2.0.0",
        f"{MOTHER_PROFILE}/",
    ],
)
def test_a_profile_naming_mother_or_maternal_makes_the_mother(profile: str) -> None:
    assert course_of(document(with_profile(profile), child())).external_record_id == "CHART-1"


@pytest.mark.parametrize(
    ("profile", "outcome"),
    [
        (CHILD_PROFILE, "live_birth"),
        ("http://example.org/StructureDefinition/newborn", "live_birth"),
        (
            "http://build.fhir.org/ig/HL7/vr-common-library/StructureDefinition-Patient-child-vr",
            "live_birth",
        ),
        (FETUS_PROFILE, "fetal_death"),
        (f"{BFDR}/Patient-fetus", "fetal_death"),
        (f"{BFDR}/Patient-Decedent", "fetal_death"),
    ],
)
def test_a_profile_naming_child_newborn_fetus_or_decedent_makes_a_child(
    profile: str, outcome: str
) -> None:
    (found,) = course_of(document(mother(), child(profile=profile))).children
    assert found.outcome == outcome


def test_only_the_last_path_segment_names_the_role() -> None:
    # the host and folders mention "mother", the profile itself names no role
    ignored = with_profile("http://mother.example.org/maternal/StructureDefinition/Patient-vr")
    rejection = rejection_of(document(ignored, child()))
    assert "no mother Patient" in issues(rejection)[0]["diagnostics"]


def test_a_patient_matching_no_role_is_ignored() -> None:
    father = mother(meta={"profile": [f"{BFDR}/Patient-father"]})
    result = course_of(document(mother(), father, child()))
    assert len(result.children) == 1


def test_a_patient_without_a_profile_is_ignored() -> None:
    stranger = {"resourceType": "Patient", "id": "x"}
    assert len(course_of(document(mother(), stranger, child())).children) == 1


def test_no_mother_is_rejected_as_structure() -> None:
    rejection = rejection_of(document(composition(), child()))
    (problem,) = issues(rejection)
    assert problem["code"] == "structure"
    assert problem["diagnostics"].startswith("The course of care has no mother Patient")
    assert problem["expression"] == ["Bundle.entry"]
    assert rejection.external_record_id == "CHART-1"


def test_two_mothers_are_rejected_and_the_count_is_named() -> None:
    rejection = rejection_of(document(mother(), mother(id="mother-2"), child()))
    (problem,) = issues(rejection)
    assert problem["code"] == "structure"
    assert "2 mother Patients; exactly one is required" in problem["diagnostics"]


def test_no_child_is_rejected_as_structure() -> None:
    (problem,) = issues(rejection_of(document(mother())))
    assert problem["code"] == "structure"
    assert "no child Patient" in problem["diagnostics"]


def test_no_mother_and_no_child_are_both_reported() -> None:
    found = issues(rejection_of(document(composition())))
    assert [problem["code"] for problem in found] == ["structure", "structure"]


def test_twins_are_two_children() -> None:
    result = course_of(document(mother(), child("a"), child("b")))
    assert [found.birth_order for found in result.children] == [1, 2]


def test_the_ig_version_is_the_first_version_on_a_role_profile() -> None:
    result = course_of(
        document(
            mother(meta={"profile": [f"{MOTHER_PROFILE}|2.0.0"]}),
            child(profile=f"{CHILD_PROFILE}|1.1.0"),
        )
    )
    assert result.ig_version == "2.0.0"


def test_a_version_on_an_unrelated_profile_is_not_the_ig_version() -> None:
    mother_patient = mother(meta={"profile": ["http://x.org/Other|9.9", MOTHER_PROFILE]})
    result = course_of(document(mother_patient, child(profile=f"{CHILD_PROFILE}|2.0.0")))
    assert result.ig_version == "2.0.0"


def test_a_junk_version_is_not_stored() -> None:
    result = course_of(document(with_profile(f"{MOTHER_PROFILE}| <script> "), child()))
    assert result.ig_version is None


def test_no_version_suffix_leaves_the_ig_version_empty() -> None:
    assert course_of(document(mother(), child())).ig_version is None


@pytest.mark.parametrize("profile", [None, 7, {"url": MOTHER_PROFILE}, ["nested"], ""])
def test_a_profile_that_is_not_a_string_names_no_role(profile: object) -> None:
    rejection = rejection_of(document(with_profile(profile), child()))
    assert "no mother Patient" in issues(rejection)[0]["diagnostics"]
