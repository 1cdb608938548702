"""Batch mode: which submissions are batches, and how each entry maps."""

from __future__ import annotations

import pytest

from ingestion.fhir import (
    CourseOfCare,
    Rejection,
    Retraction,
    entry_head,
    map_batch_entry,
    submission_kind,
)
from tests.fhir.builders import KEY, batch, child, course, delete, document, issues, message, mother


def kind_of(bundle: dict) -> str:
    return submission_kind(bundle.get("type"), [entry_head(e) for e in bundle.get("entry", [])])


def map_entry(entry: object, index: int = 0) -> object:
    return map_batch_entry(entry, index, fingerprint_key=KEY)


# submission_kind and entry_head


def test_a_document_is_a_single_course() -> None:
    assert kind_of(course()) == "single"


def test_a_bundle_whose_entries_are_bundles_is_a_batch() -> None:
    assert kind_of(batch({"resource": course()})) == "batch"


def test_a_transaction_of_deletes_is_a_batch() -> None:
    assert kind_of(batch(delete("Bundle/C-1"), bundle_type="transaction")) == "batch"


def test_a_single_bundle_entry_among_resources_makes_a_batch() -> None:
    bundle = batch({"resource": mother()}, {"resource": course()})
    assert kind_of(bundle) == "batch"


def test_a_message_is_single_even_though_it_carries_a_bundle() -> None:
    assert kind_of(message(course())) == "single"


def test_a_transaction_of_plain_resources_is_a_single_course() -> None:
    bundle = batch({"resource": mother()}, {"resource": child()}, bundle_type="transaction")
    assert kind_of(bundle) == "single"


@pytest.mark.parametrize(
    ("entry", "head"),
    [
        ({"resource": {"resourceType": "Bundle"}}, ("Bundle", None)),
        ({"request": {"method": "DELETE"}}, (None, "DELETE")),
        ({"resource": [], "request": "x"}, (None, None)),
        (None, (None, None)),
        ("entry", (None, None)),
        ({"resource": {"resourceType": ["odd"]}}, (["odd"], None)),
    ],
)
def test_entry_head_reads_what_is_found_and_never_raises(entry: object, head: tuple) -> None:
    assert entry_head(entry) == head


def test_submission_kind_tolerates_malformed_heads() -> None:
    assert submission_kind("batch", [None, (1,), ("Bundle", None, 3)]) == "single"  # type: ignore[list-item]


def test_submission_kind_accepts_a_generator_of_heads() -> None:
    heads = (entry_head(e) for e in [{"resource": {"resourceType": "Bundle"}}])
    assert submission_kind("batch", heads) == "batch"


# map_batch_entry


def test_an_inner_bundle_is_one_course_of_care_referenced_by_its_entry() -> None:
    result = map_entry({"resource": course(chart="C-3")}, 3)
    assert isinstance(result, CourseOfCare)
    assert (result.reference, result.external_record_id) == ("Bundle.entry[3]", "C-3")


@pytest.mark.parametrize(
    "entry",
    [
        {"resource": mother()},
        {"resource": None},
        {},
        None,
        [],
        "x",
        {"request": {"method": "POST"}},
    ],
)
def test_an_entry_that_is_neither_a_bundle_nor_a_delete_is_ignored(entry: object) -> None:
    assert map_entry(entry) is None


def test_a_rejected_inner_bundle_names_its_batch_path() -> None:
    result = map_entry({"resource": document(child(), chart="C-1")}, 2)
    assert isinstance(result, Rejection)
    assert result.reference == "Bundle.entry[2]"
    assert issues(result)[0]["expression"] == ["Bundle.entry[2].resource.entry"]


def test_a_missing_chart_number_in_a_batch_is_prefixed_with_the_batch_path() -> None:
    result = map_entry({"resource": course(chart=None)}, 1)
    assert isinstance(result, Rejection)
    assert issues(result)[0]["expression"] == ["Bundle.entry[1].resource.identifier.value"]


def test_a_message_entry_in_a_batch_is_unwrapped_with_true_paths() -> None:
    inner = message(document(child(), chart="C-5"))
    result = map_entry({"resource": inner, "request": {"method": "POST"}}, 0)
    assert isinstance(result, Rejection)
    assert issues(result)[0]["expression"] == ["Bundle.entry[0].resource.entry[2].resource.entry"]
    assert result.external_record_id == "C-5"


def test_a_delete_entry_is_a_retraction() -> None:
    assert map_entry(delete("Bundle?identifier=C-1"), 5) == Retraction("Bundle.entry[5]", "C-1")


def test_batch_entries_map_independently() -> None:
    entries = [
        {"resource": course(chart="good")},
        {"resource": document(mother(), chart="bad")},
        {"resource": mother()},
        delete("Bundle/gone"),
    ]
    results = [map_entry(entry, index) for index, entry in enumerate(entries)]
    assert [type(result).__name__ for result in results] == [
        "CourseOfCare",
        "Rejection",
        "NoneType",
        "Retraction",
    ]
