"""NVSS void messages: the NVSS record ids of a block, read from the message's Parameters."""

from __future__ import annotations

from typing import Any

import pytest

from ingestion.fhir import Rejection, Void, map_batch_entry
from ingestion.fhir.voids import MAX_BLOCK_COUNT, spellings
from tests.fhir.builders import KEY, issues, mapped

BIRTH_VOID = "http://nchs.cdc.gov/birth_submission_void"


def void_message(event: str = BIRTH_VOID, **parameters: Any) -> dict[str, Any]:
    values = {"cert_no": 48858, "event_year": 2019, "jurisdiction_id": "UT", **parameters}
    parameter = []
    for name, value in values.items():
        if value is None:
            continue
        kind = "valueString" if isinstance(value, str) else "valueUnsignedInt"
        parameter.append({"name": name, kind: value})
    return {
        "resourceType": "Bundle",
        "type": "message",
        "entry": [
            {"resource": {"resourceType": "MessageHeader", "eventUri": event}},
            {"resource": {"resourceType": "Parameters", "parameter": parameter}},
        ],
    }


def test_a_void_names_one_record_padded_and_unpadded() -> None:
    assert mapped(void_message()) == Void(
        reference="Bundle",
        external_record_id="2019UT048858",
        chart_numbers=("2019UT048858", "2019UT48858"),
        block_count=1,
    )


@pytest.mark.parametrize("event", [BIRTH_VOID, "http://nchs.cdc.gov/fd_submission_void"])
def test_birth_and_fetal_death_voids_are_both_read(event: str) -> None:
    assert isinstance(mapped(void_message(event)), Void)


def test_the_event_may_come_from_event_coding() -> None:
    bundle = void_message()
    header = bundle["entry"][0]["resource"]
    del header["eventUri"]
    header["eventCoding"] = {"code": "birth_submission_void"}
    assert isinstance(mapped(bundle), Void)


def test_block_count_voids_consecutive_certificate_numbers() -> None:
    void = mapped(void_message(block_count=3))
    assert isinstance(void, Void)
    assert void.block_count == 3
    assert void.chart_numbers == (
        "2019UT048858",
        "2019UT48858",
        "2019UT048859",
        "2019UT48859",
        "2019UT048860",
        "2019UT48860",
    )


@pytest.mark.parametrize("block_count", [None, 0, 1])
def test_no_block_count_or_zero_means_one(block_count: int | None) -> None:
    void = mapped(void_message(block_count=block_count))
    assert isinstance(void, Void) and void.block_count == 1


def test_a_six_digit_certificate_number_has_one_spelling() -> None:
    assert spellings(2020, "NY", 123456) == ("2020NY123456",)
    assert spellings(2020, "NY", 87366) == ("2020NY087366", "2020NY87366")


def test_a_certificate_number_sent_as_a_string_is_read() -> None:
    void = mapped(void_message(cert_no="087366", event_year=2020, jurisdiction_id="ny"))
    assert isinstance(void, Void)
    assert void.chart_numbers == ("2020NY087366", "2020NY87366")


def test_a_block_is_capped() -> None:
    assert isinstance(mapped(void_message(block_count=MAX_BLOCK_COUNT)), Void)
    (problem,) = issues(mapped(void_message(block_count=MAX_BLOCK_COUNT + 1)))
    assert problem["code"] == "too-costly"
    assert problem["expression"] == ["Bundle.entry[1].resource.parameter"]


@pytest.mark.parametrize(
    ("parameters", "named"),
    [
        ({"cert_no": None}, "cert_no"),
        ({"event_year": None}, "event_year"),
        ({"jurisdiction_id": None}, "jurisdiction_id"),
        ({"jurisdiction_id": "Utah"}, "jurisdiction_id"),
        ({"block_count": "ten"}, "block_count"),
    ],
)
def test_a_void_that_names_no_record_is_rejected(parameters: dict, named: str) -> None:
    result = mapped(void_message(**parameters))
    assert isinstance(result, Rejection)
    (problem,) = issues(result)
    assert problem["code"] == "required"
    assert named in problem["diagnostics"]


def test_a_void_without_parameters_is_rejected() -> None:
    bundle = void_message()
    del bundle["entry"][1]
    (problem,) = issues(mapped(bundle))
    assert (problem["code"], problem["expression"]) == ("required", ["Bundle.entry"])


def test_a_void_inside_a_batch_keeps_its_reference() -> None:
    result = map_batch_entry({"resource": void_message()}, 3, fingerprint_key=KEY)
    assert isinstance(result, Void) and result.reference == "Bundle.entry[3]"
