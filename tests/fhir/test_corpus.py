"""What each file of the BFDR example corpus maps to.

The corpus (tests/fixtures/bfdr-examples, a copy of ../shared/corpus; SOURCES.md says where
each file comes from) is real-world shaped: the .NET reference library's fixtures and the
NCHS API's messages. Every file has an expectation here, so a new corpus file fails
``test_every_corpus_file_has_an_expectation`` until someone states what it maps to.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from ingestion.fhir import (
    Child,
    CourseOfCare,
    Rejection,
    Result,
    Void,
    entry_head,
    map_batch_entry,
    map_single,
    submission_kind,
)
from tests.fhir.builders import KEY

CORPUS = Path(__file__).resolve().parents[1] / "fixtures/bfdr-examples"


@dataclass(frozen=True)
class Course:
    """A course of care, as the corpus file should map to (nothing here is identifying)."""

    chart: str
    children: tuple[Child, ...]
    providers: tuple[tuple[str, str], ...] = ()  # (stable id, role)
    attended_by: tuple[str, ...] = ()
    present: tuple[str, ...] = ()
    transfers: tuple[str, ...] = ()
    mother_age_years: int | None = None
    mother_postal_prefix: str | None = None
    fingerprinted: bool = False
    consent_granted: bool = False  # no corpus file carries a Consent


@dataclass(frozen=True)
class Rejected:
    codes: tuple[str, ...]
    expression: str


EXPECTED: dict[str, Course | Rejected | Void] = {
    "BasicBirthRecord.json": Course(
        chart="2019NJ15075",
        children=(
            Child(
                birth_order=1,
                outcome="live_birth",
                sex="female",
                birth_year=2019,
                birth_weight_grams=2500,
                gestational_age_weeks=36,
                gestational_age_days=0,
                apgar_1=5,
                apgar_5=7,
            ),
        ),
        providers=(
            ("practitioner-vital-records-avery-jones", "other"),
            ("practitioner-vital-records-janet-seito", "other"),
        ),
        present=(
            "practitioner-vital-records-avery-jones",
            "practitioner-vital-records-janet-seito",
        ),
        transfers=("infant_transfer_out", "maternal_transfer_in"),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "BasicBirthRecord2.json": Course(
        chart="2023TT000100",
        children=(Child(birth_order=1, outcome="live_birth", birth_year=2023),),
        providers=(
            ("dca24157-5797-4e5b-bd47-c99128c2d056", "other"),
            ("6a5dd93d-85b1-4217-8ce1-63670453698e", "other"),
        ),
        present=("6a5dd93d-85b1-4217-8ce1-63670453698e",),
        mother_age_years=30,
        mother_postal_prefix=None,
        fingerprinted=True,
    ),
    "BasicFetalDeathRecord.json": Course(
        chart="2020NY087366",
        children=(
            Child(birth_order=1, outcome="fetal_death", birth_year=2020, birth_weight_grams=3333),
        ),
        providers=(
            ("139fd854-780b-4427-b3cf-6c85f41e6f35", "other"),
            ("348f658f-b005-4136-9831-08c7b197d474", "other"),
        ),
        present=("348f658f-b005-4136-9831-08c7b197d474",),
        mother_age_years=28,
        mother_postal_prefix="064",
        fingerprinted=False,
    ),
    "BasicFetalDeathRecord2.json": Course(
        chart="2025TS149737",
        children=(Child(birth_order=1, outcome="fetal_death", birth_year=2025),),
        providers=(
            ("4b65ce85-8e0e-4eb9-bcec-16abe2072389", "other"),
            ("964e41cc-1912-43a9-b2bd-79bf33ba7559", "other"),
        ),
        present=("4b65ce85-8e0e-4eb9-bcec-16abe2072389", "964e41cc-1912-43a9-b2bd-79bf33ba7559"),
        mother_age_years=None,
        mother_postal_prefix=None,
        fingerprinted=False,
    ),
    "BasicFetalDeathRecordSubmissionMessage.json": Course(
        chart="2025XX453723",
        children=(Child(birth_order=1, outcome="fetal_death", birth_year=2025),),
        providers=(
            ("194e1d14-a1f6-4f8a-8be4-74336fd1cab5", "other"),
            ("d81a0b68-e214-47b1-be0d-7cc11229353f", "other"),
        ),
        present=("194e1d14-a1f6-4f8a-8be4-74336fd1cab5", "d81a0b68-e214-47b1-be0d-7cc11229353f"),
        mother_age_years=None,
        mother_postal_prefix=None,
        fingerprinted=False,
    ),
    "BatchSingleBirthMessage.json": Course(
        chart="2019UT48858",
        children=(Child(birth_order=1, outcome="live_birth", sex="female", birth_year=2019),),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "BirthRecordAcknowledgementMessage.json": Rejected(
        codes=("not-supported",), expression="Bundle.entry[0].resource.eventUri"
    ),
    "BirthRecordBabyGQuinn.json": Course(
        chart="2019NJ15075",
        children=(
            Child(
                birth_order=1,
                outcome="live_birth",
                sex="female",
                birth_year=2019,
                birth_weight_grams=2500,
                gestational_age_weeks=36,
                gestational_age_days=0,
                apgar_1=5,
                apgar_5=7,
            ),
        ),
        providers=(
            ("practitioner-vital-records-avery-jones", "other"),
            ("practitioner-vital-records-janet-seito", "other"),
        ),
        present=(
            "practitioner-vital-records-avery-jones",
            "practitioner-vital-records-janet-seito",
        ),
        transfers=("infant_transfer_out", "maternal_transfer_in"),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "BirthRecordBabyGQuinnJurisdiction.json": Course(
        chart="2019NJ15075",
        children=(
            Child(
                birth_order=1,
                outcome="live_birth",
                sex="female",
                birth_year=2019,
                birth_weight_grams=2500,
                gestational_age_weeks=36,
                gestational_age_days=0,
                apgar_1=5,
                apgar_5=7,
            ),
        ),
        providers=(
            ("practitioner-vital-records-avery-jones", "other"),
            ("practitioner-vital-records-janet-seito", "other"),
        ),
        present=(
            "practitioner-vital-records-avery-jones",
            "practitioner-vital-records-janet-seito",
        ),
        transfers=("infant_transfer_out", "maternal_transfer_in"),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "BirthRecordBabyGQuinnWithEditFlags.json": Course(
        chart="2019NJ15075",
        children=(
            Child(
                birth_order=1,
                outcome="live_birth",
                sex="female",
                birth_year=2019,
                birth_weight_grams=2500,
                gestational_age_weeks=36,
                gestational_age_days=0,
                apgar_1=5,
                apgar_5=7,
            ),
        ),
        providers=(
            ("practitioner-vital-records-avery-jones", "other"),
            ("practitioner-vital-records-janet-seito", "other"),
        ),
        present=(
            "practitioner-vital-records-avery-jones",
            "practitioner-vital-records-janet-seito",
        ),
        transfers=("infant_transfer_out", "maternal_transfer_in"),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "BirthRecordDemographicsCodingMessage.json": Rejected(
        codes=("not-supported",), expression="Bundle.entry[0].resource.eventUri"
    ),
    "BirthRecordErrorMessage.json": Rejected(
        codes=("not-supported",), expression="Bundle.entry[0].resource.eventUri"
    ),
    "BirthRecordFakeNoRace.json": Course(
        chart="2023XX000100",
        children=(Child(birth_order=1, outcome="live_birth", birth_year=2023),),
        providers=(
            ("74283f50-0f4b-435b-8362-9e00782222a7", "other"),
            ("f29731d6-82a7-4cf8-94a7-867f24265f36", "other"),
        ),
        present=("f29731d6-82a7-4cf8-94a7-867f24265f36",),
        mother_age_years=30,
        mother_postal_prefix=None,
        fingerprinted=True,
    ),
    "BirthRecordFakeWithRace.json": Course(
        chart="2023XX000100",
        children=(Child(birth_order=1, outcome="live_birth", birth_year=2023),),
        providers=(
            ("fdef57f8-7ca9-444e-a733-72e7d5f8e0a8", "other"),
            ("e6ed844b-7281-48a9-a841-73d164d0f95b", "other"),
        ),
        present=("e6ed844b-7281-48a9-a841-73d164d0f95b",),
        mother_age_years=30,
        mother_postal_prefix=None,
        fingerprinted=True,
    ),
    "BirthRecordIndustryAndOccupationCodedContent.json": Rejected(
        codes=("structure", "structure"), expression="Bundle.entry"
    ),
    "BirthRecordInvalidLocation.json": Course(
        chart="2025MA881887",
        children=(
            Child(
                birth_order=1,
                outcome="live_birth",
                birth_year=2025,
                birth_weight_grams=2490,
                apgar_5=9,
            ),
        ),
        providers=(
            ("aa81d107-459e-47dd-8de3-ccc8591f9782", "other"),
            ("465dc38e-734e-4844-90d3-fe4d209b7337", "other"),
        ),
        present=("aa81d107-459e-47dd-8de3-ccc8591f9782", "465dc38e-734e-4844-90d3-fe4d209b7337"),
        mother_age_years=None,
        mother_postal_prefix=None,
        fingerprinted=False,
    ),
    "BirthRecordR.json": Course(
        chart="2024XX099991",
        children=(
            Child(
                birth_order=1,
                outcome="live_birth",
                birth_year=2024,
                birth_weight_grams=539,
                gestational_age_weeks=21,
                gestational_age_days=0,
                apgar_5=1,
                apgar_10=4,
            ),
        ),
        providers=(
            ("11c16a54-c979-4708-9bfb-4f5aa3b397d6", "other"),
            ("fc7abb3e-0447-4ea3-b25a-6b5800cb3a87", "other"),
        ),
        present=("11c16a54-c979-4708-9bfb-4f5aa3b397d6", "fc7abb3e-0447-4ea3-b25a-6b5800cb3a87"),
        transfers=("infant_transfer_out",),
        mother_age_years=31,
        mother_postal_prefix="854",
        fingerprinted=True,
    ),
    "BirthRecordStatusMessage.json": Rejected(
        codes=("not-supported",), expression="Bundle.entry[0].resource.eventUri"
    ),
    "BirthRecordSubmissionMessage.json": Course(
        chart="2019UT48858",
        children=(Child(birth_order=1, outcome="live_birth", sex="female", birth_year=2019),),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "BirthRecordSubmissionMessageInvalidCertNo.json": Course(
        chart="2019UT48858",
        children=(Child(birth_order=1, outcome="live_birth", sex="female", birth_year=2019),),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "BirthRecordUpdateMessage.json": Course(
        chart="2019UT48858",
        children=(Child(birth_order=1, outcome="live_birth", sex="female", birth_year=2019),),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "BirthRecordVoidMessage.json": Void(
        reference="Bundle",
        external_record_id="2019UT048858",
        chart_numbers=tuple(
            chart for n in range(48858, 48868) for chart in (f"2019UT0{n}", f"2019UT{n}")
        ),
        block_count=10,
    ),
    "BirthRecordZ.json": Course(
        chart="2024XX009999",
        children=(
            Child(
                birth_order=2,
                outcome="live_birth",
                birth_year=2024,
                birth_weight_grams=2277,
                gestational_age_weeks=36,
                gestational_age_days=0,
                apgar_5=9,
            ),
        ),
        providers=(
            ("38b3f230-f3ea-495b-8489-d68772e6fe0f", "other"),
            ("a74f5373-2ee1-4d36-b140-3548b2862082", "other"),
        ),
        present=("38b3f230-f3ea-495b-8489-d68772e6fe0f", "a74f5373-2ee1-4d36-b140-3548b2862082"),
        mother_age_years=28,
        mother_postal_prefix="854",
        fingerprinted=True,
    ),
    "Bundle-bundle-coded-race-and-ethnicity-baby-g-quinn.json": Rejected(
        codes=("structure", "structure"), expression="Bundle.entry"
    ),
    "FetalDeathAcknowledgementMessage.json": Rejected(
        codes=("not-supported",), expression="Bundle.entry[0].resource.eventUri"
    ),
    "FetalDeathCauseOrConditionCodedContent.json": Rejected(
        codes=("structure", "structure"), expression="Bundle.entry"
    ),
    "FetalDeathCodedCauseMessage.json": Rejected(
        codes=("not-supported",), expression="Bundle.entry[0].resource.eventUri"
    ),
    "FetalDeathErrorMessage.json": Rejected(
        codes=("not-supported",), expression="Bundle.entry[0].resource.eventUri"
    ),
    "FetalDeathRecordInvalidLocation.json": Course(
        chart="2025MA367698",
        children=(Child(birth_order=1, outcome="fetal_death", birth_year=2025),),
        providers=(
            ("86c67b5b-a2e3-4220-9233-acbf27f07bbb", "other"),
            ("a1ab7aa1-4c53-436c-9846-c8878d08f711", "other"),
        ),
        present=("86c67b5b-a2e3-4220-9233-acbf27f07bbb", "a1ab7aa1-4c53-436c-9846-c8878d08f711"),
        mother_age_years=None,
        mother_postal_prefix=None,
        fingerprinted=False,
    ),
    "FetalDeathRecordSubmissionMessage.json": Course(
        chart="2025XX453723",
        children=(Child(birth_order=1, outcome="fetal_death", birth_year=2025),),
        providers=(
            ("194e1d14-a1f6-4f8a-8be4-74336fd1cab5", "other"),
            ("d81a0b68-e214-47b1-be0d-7cc11229353f", "other"),
        ),
        present=("194e1d14-a1f6-4f8a-8be4-74336fd1cab5", "d81a0b68-e214-47b1-be0d-7cc11229353f"),
        mother_age_years=None,
        mother_postal_prefix=None,
        fingerprinted=False,
    ),
    "FetalDeathReport.json": Course(
        chart="2019NJ009876",
        children=(
            Child(
                birth_order=3,
                outcome="fetal_death",
                sex="female",
                birth_year=2019,
                birth_weight_grams=1530,
                gestational_age_weeks=20,
                gestational_age_days=0,
            ),
        ),
        providers=(("practitioner-vital-records-janet-seito", "other"),),
        present=("practitioner-vital-records-janet-seito",),
        mother_age_years=28,
        mother_postal_prefix="481",
        fingerprinted=True,
    ),
    "FetalDeathUpdateMessage.json": Course(
        chart="2020NY087366",
        children=(
            Child(birth_order=1, outcome="fetal_death", birth_year=2020, birth_weight_grams=3333),
        ),
        providers=(
            ("139fd854-780b-4427-b3cf-6c85f41e6f35", "other"),
            ("348f658f-b005-4136-9831-08c7b197d474", "other"),
        ),
        present=("348f658f-b005-4136-9831-08c7b197d474",),
        mother_age_years=28,
        mother_postal_prefix="064",
        fingerprinted=False,
    ),
    "FetalDeathVoidMessage.json": Void(
        reference="Bundle",
        external_record_id="2022MA063214",
        chart_numbers=tuple(
            chart for n in range(63214, 63222) for chart in (f"2022MA0{n}", f"2022MA{n}")
        ),
        block_count=8,
    ),
    "HeadlessMessage.json": Course(
        chart="2019UT48858",
        children=(Child(birth_order=1, outcome="live_birth", sex="female", birth_year=2019),),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "MissingMessage.json": Course(
        chart="2019UT48858",
        children=(Child(birth_order=1, outcome="live_birth", sex="female", birth_year=2019),),
        mother_age_years=34,
        mother_postal_prefix="841",
        fingerprinted=True,
    ),
    "RaceEthnicityCaseRecord.json": Rejected(codes=("structure",), expression="Bundle.entry"),
}


def load(name: str) -> dict:
    return orjson.loads((CORPUS / name).read_bytes())


def map_file(name: str) -> Result:
    """Map a corpus file the way the worker does: single course, or the first batch entry."""
    bundle = load(name)
    heads = [entry_head(entry) for entry in bundle.get("entry", [])]
    if submission_kind(bundle.get("type"), heads) == "single":
        return map_single(bundle, fingerprint_key=KEY)
    result = map_batch_entry(bundle["entry"][0], 0, fingerprint_key=KEY)
    assert result is not None
    return result


def as_expected(result: Result) -> Course | Rejected | Void:
    if isinstance(result, Void):
        return result
    if isinstance(result, Rejection):
        found = result.operation_outcome["issue"]
        return Rejected(tuple(i["code"] for i in found), found[0]["expression"][0])
    assert isinstance(result, CourseOfCare), result
    assert result.ig_version is None  # corpus profiles carry no |version suffix
    return Course(
        chart=result.external_record_id,
        children=result.children,
        providers=tuple((p.stable_id, p.role) for p in result.providers),
        attended_by=result.attended_by,
        present=result.present,
        transfers=result.transfers,
        mother_age_years=result.mother_age_years,
        mother_postal_prefix=result.mother_postal_prefix,
        fingerprinted=result.fingerprint is not None,
        consent_granted=result.consent_granted,
    )


def test_every_corpus_file_has_an_expectation() -> None:
    assert sorted(path.name for path in CORPUS.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_corpus_file_maps_as_stated(name: str) -> None:
    assert as_expected(map_file(name)) == EXPECTED[name]


def test_the_batch_file_is_a_batch_of_one_submission_message() -> None:
    bundle = load("BatchSingleBirthMessage.json")
    kind = submission_kind(bundle["type"], [entry_head(e) for e in bundle["entry"]])
    assert (kind, len(bundle["entry"])) == ("batch", 1)
    assert map_file("BatchSingleBirthMessage.json").reference == "Bundle.entry[0]"


def test_an_unwrapped_submission_message_reports_true_paths() -> None:
    bundle = load("BirthRecordSubmissionMessage.json")
    del bundle["entry"][2]["resource"]["identifier"]
    result = map_single(bundle, fingerprint_key=KEY)
    assert isinstance(result, Rejection)
    (problem,) = result.operation_outcome["issue"]
    assert problem["expression"] == ["Bundle.entry[2].resource.identifier.value"]


def test_the_same_birth_sent_by_two_senders_gets_one_fingerprint() -> None:
    # Baby G Quinn's provider and jurisdiction reports: same mother, same birth date
    provider_report = map_file("BirthRecordBabyGQuinn.json")
    jurisdiction_report = map_file("BasicBirthRecord.json")
    assert isinstance(provider_report, CourseOfCare)
    assert isinstance(jurisdiction_report, CourseOfCare)
    assert provider_report.fingerprint == jurisdiction_report.fingerprint


def test_gestational_age_linked_to_the_mother_applies_to_the_child() -> None:
    # BirthRecordR and BirthRecordZ send 11884-4 (gestational age at delivery) with the
    # mother as subject: it belongs to the delivery, so the child carries it.
    expected = {"BirthRecordR.json": 21, "BirthRecordZ.json": 36}
    for name, weeks in expected.items():
        result = map_file(name)
        assert isinstance(result, CourseOfCare)
        assert result.children[0].gestational_age_weeks == weeks
