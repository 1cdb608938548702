"""Retractions: a Composition entered-in-error, or a batch entry with request.method DELETE."""

from __future__ import annotations

import pytest

from ingestion.fhir import Rejection, Retraction, map_batch_entry
from tests.fhir.builders import (
    KEY,
    child,
    composition,
    delete,
    document,
    issues,
    mapped,
    message,
    mother,
)


def retract(entry: object, index: int = 0) -> object:
    return map_batch_entry(entry, index, fingerprint_key=KEY)


# Composition entered-in-error


def test_a_composition_entered_in_error_retracts_the_chart_number() -> None:
    result = mapped(document(composition("entered-in-error"), mother(), child(), chart="C-9"))
    assert result == Retraction("Bundle", "C-9")


def test_a_retraction_needs_no_mother_or_child() -> None:
    assert mapped(document(composition("entered-in-error"), chart="C-9")) == Retraction(
        "Bundle", "C-9"
    )


def test_any_composition_of_the_bundle_may_carry_the_retraction() -> None:
    bundle = document(composition("final"), composition("entered-in-error"), chart="C-9")
    assert mapped(bundle) == Retraction("Bundle", "C-9")


def test_a_retraction_without_a_chart_number_is_rejected_as_required() -> None:
    result = mapped(document(composition("entered-in-error"), chart=None))
    assert isinstance(result, Rejection)
    (problem,) = issues(result)
    assert (problem["code"], problem["expression"]) == ("required", ["Bundle.identifier.value"])


def test_a_final_composition_does_not_retract() -> None:
    assert not isinstance(mapped(document(composition("final"), mother(), child())), Retraction)


def test_a_retraction_inside_a_submission_message_is_unwrapped() -> None:
    carried = document(composition("entered-in-error"), chart="C-9")
    assert mapped(message(carried)) == Retraction("Bundle", "C-9")


def test_a_retraction_in_a_batch_names_its_entry() -> None:
    inner = document(composition("entered-in-error"), chart="C-9")
    assert retract({"resource": inner}, 4) == Retraction("Bundle.entry[4]", "C-9")


# DELETE entries


@pytest.mark.parametrize(
    ("url", "chart"),
    [
        ("Bundle?identifier=C-9", "C-9"),
        ("Bundle?identifier=urn:example:charts|C-9", "C-9"),
        ("Bundle?identifier=|C-9", "C-9"),
        ("Bundle?identifier=urn%3Aexample%7CC%209", "C 9"),
        ("Bundle?_format=json&identifier=C-9", "C-9"),
        ("Bundle?identifier=A+B", "A+B"),
        ("Bundle/C-9", "C-9"),
        ("Bundle/C%2F9", "C/9"),
        ("https://registry.example.org/fhir/Bundle/C-9", "C-9"),
        ("/Bundle?identifier=C-9", "C-9"),
        ("Bundle?identifier=%20C-9%20", "C-9"),
        # A chart number holding "|": after the first unescaped bar, or escaped (FHIR search)
        ("Bundle?identifier=|AB|12", "AB|12"),
        ("Bundle?identifier=urn:example:charts|AB|12", "AB|12"),
        ("Bundle?identifier=AB\\|12", "AB|12"),
        ("Bundle?identifier=AB%5C%7C12", "AB|12"),
        ("Bundle?identifier=|A\\\\B", "A\\B"),
        ("Bundle/AB%7C12", "AB|12"),
        # Normalised: NFC, no zero-width space or byte-order mark
        ("Bundle?identifier=C%E2%80%8B-9", "C-9"),
        ("Bundle/%EF%BB%BFC-9", "C-9"),
        ("Bundle?identifier=Jose%CC%81", "Jos\u00e9"),
    ],
)
def test_a_delete_names_the_chart_number_in_its_url(url: str, chart: str) -> None:
    assert retract(delete(url), 2) == Retraction("Bundle.entry[2]", chart)


@pytest.mark.parametrize("method", ["DELETE", "delete", " Delete "])
def test_the_delete_method_is_matched_case_insensitively(method: str) -> None:
    entry = {"request": {"method": method, "url": "Bundle/C-9"}}
    assert retract(entry) == Retraction("Bundle.entry[0]", "C-9")


def test_a_delete_without_a_chart_in_its_url_falls_back_to_the_resource_identifier() -> None:
    entry = delete("Bundle", {"resourceType": "Bundle", "identifier": {"value": "C-9"}})
    assert retract(entry) == Retraction("Bundle.entry[0]", "C-9")


def test_an_identifier_list_on_the_resource_is_read_too() -> None:
    entry = delete(None, {"resourceType": "Composition", "identifier": [{"value": "C-9"}]})
    assert retract(entry) == Retraction("Bundle.entry[0]", "C-9")


@pytest.mark.parametrize("url", ["Bundle", "Patient/123", "Bundle?identifier=", "", None, 7, ["x"]])
def test_a_delete_naming_no_chart_number_is_rejected_as_required(url: object) -> None:
    result = retract(delete(url), 3)
    assert isinstance(result, Rejection)
    (problem,) = issues(result)
    assert problem["code"] == "required"
    assert problem["expression"] == ["Bundle.entry[3].request.url"]


def test_a_delete_naming_an_absurdly_long_chart_number_is_rejected_as_value() -> None:
    result = retract(delete("Bundle/" + "9" * 201))
    assert isinstance(result, Rejection)
    assert issues(result)[0]["code"] == "value"


def test_a_delete_wins_over_the_bundle_it_carries() -> None:
    entry = delete("Bundle/C-9", document(mother(), child(), chart="OTHER"))
    assert retract(entry) == Retraction("Bundle.entry[0]", "C-9")


def test_the_rejection_never_echoes_the_url() -> None:
    result = retract(delete("Patient/secret-value-123"))
    assert isinstance(result, Rejection)
    assert "secret-value-123" not in repr(result)
