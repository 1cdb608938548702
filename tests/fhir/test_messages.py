"""NVSS messages: submissions unwrap to their document; voids retract (tests/fhir/test_voids.py);
other messages are not supported."""

from __future__ import annotations

import pytest

from tests.fhir.builders import (
    course,
    course_of,
    document,
    entry,
    issues,
    message,
    rejection_of,
)


def test_a_submission_message_maps_the_document_it_carries() -> None:
    assert course_of(message(course(chart="C-7"))).external_record_id == "C-7"


def test_an_update_message_is_unwrapped_too() -> None:
    carried = course(chart="C-7")
    event = "http://nchs.cdc.gov/birth_submission_update"
    assert course_of(message(carried, event=event)).external_record_id == "C-7"


def test_the_document_the_header_focuses_on_is_preferred() -> None:
    bundle = message(course(chart="FOCUSED"), focus="urn:uuid:document-1")
    bundle["entry"].insert(1, entry(course(chart="FIRST"), "urn:uuid:other"))
    assert course_of(bundle).external_record_id == "FOCUSED"


def test_a_focus_may_name_the_document_as_bundle_and_id() -> None:
    focused = course(chart="FOCUSED", id="doc-42")
    bundle = message(focused, focus="Bundle/doc-42")
    bundle["entry"].insert(1, entry(course(chart="FIRST")))
    assert course_of(bundle).external_record_id == "FOCUSED"


def test_without_a_matching_focus_the_first_bundle_is_the_document() -> None:
    bundle = message(course(chart="ONLY"), focus="Bundle/elsewhere")
    assert course_of(bundle).external_record_id == "ONLY"


def test_a_message_without_a_header_is_still_unwrapped() -> None:
    bundle = message(course(chart="C-1"))
    del bundle["entry"][0]
    assert course_of(bundle).external_record_id == "C-1"


def test_a_message_whose_header_has_no_event_is_still_unwrapped() -> None:
    assert course_of(message(course(chart="C-1"), event=None)).external_record_id == "C-1"


@pytest.mark.parametrize(
    ("event", "named"),
    [
        ("http://nchs.cdc.gov/birth_acknowledgement", "acknowledgement message"),
        ("http://nchs.cdc.gov/birth_extraction_error", "extraction error message"),
        ("http://nchs.cdc.gov/birth_status", "status message"),
        ("http://nchs.cdc.gov/birth_demographics_coding", "coding response message"),
        ("http://nchs.cdc.gov/fd_causeofdeath_coding_update", "coding response message"),
        ("http://nchs.cdc.gov/birth_submission_alias", "alias message"),
    ],
)
def test_a_message_carrying_no_course_of_care_is_not_supported(event: str, named: str) -> None:
    (problem,) = issues(rejection_of(message(course(), event=event)))
    assert problem["code"] == "not-supported"
    assert named in problem["diagnostics"]
    assert "entered-in-error" in problem["diagnostics"]  # says how to retract instead
    assert "DELETE" in problem["diagnostics"]
    assert problem["expression"] == ["Bundle.entry[0].resource.eventUri"]


def test_the_event_may_come_from_event_coding() -> None:
    bundle = message(course(), event=None)
    bundle["entry"][0]["resource"]["eventCoding"] = {"code": "birth_acknowledgement"}
    (problem,) = issues(rejection_of(bundle))
    assert problem["expression"] == ["Bundle.entry[0].resource.eventCoding.code"]


def test_a_message_without_a_document_is_not_supported() -> None:
    (problem,) = issues(rejection_of(message(None)))
    assert problem["code"] == "not-supported"
    assert "no document Bundle" in problem["diagnostics"]
    assert problem["expression"] == ["Bundle.entry"]


def test_the_diagnostics_never_echo_the_submitted_event() -> None:
    rejection = rejection_of(message(course(), event="urn:secret-marker:birth_status"))
    assert "secret-marker" not in repr(rejection)


def test_expressions_inside_an_unwrapped_message_are_true_paths() -> None:
    carried = course(chart="C-1")
    carried["entry"][3:] = [{"resource": {"resourceType": "Observation"}}]
    carried["timestamp"] = "not a time"
    (problem,) = issues(rejection_of(message(carried)))
    assert problem["expression"] == ["Bundle.entry[2].resource.timestamp"]


def test_a_missing_chart_number_inside_a_message_names_the_inner_document() -> None:
    (problem,) = issues(rejection_of(message(course(chart=None))))
    assert problem["expression"] == ["Bundle.entry[2].resource.identifier.value"]


def test_the_document_stamp_is_preferred_to_the_message_stamp() -> None:
    bundle = message(course(timestamp="2024-01-02T00:00:00Z"))
    bundle["timestamp"] = "2024-05-05T00:00:00Z"
    assert course_of(bundle).source_updated_at.isoformat() == "2024-01-02T00:00:00+00:00"  # type: ignore[union-attr]


def test_a_document_without_a_stamp_takes_the_message_stamp() -> None:
    bundle = message(course())
    bundle["timestamp"] = "2024-05-05T00:00:00Z"
    assert course_of(bundle).source_updated_at.isoformat() == "2024-05-05T00:00:00+00:00"  # type: ignore[union-attr]


def test_a_message_inside_a_message_is_not_unwrapped_twice() -> None:
    rejection = rejection_of(message(message(course())))
    assert rejection.reference == "Bundle"


def test_a_plain_document_is_never_treated_as_a_message() -> None:
    assert course_of(document(*course()["entry"])).external_record_id == "CHART-1"
