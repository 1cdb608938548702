"""Totality at the edges: huge, deep and odd inputs, and the last-resort guard."""

from __future__ import annotations

import pytest

from ingestion.fhir import CourseOfCare, Rejection, map_batch_entry, map_single
from ingestion.fhir import mapping as mapping_module
from tests.fhir.builders import (
    KEY,
    child,
    consent,
    course,
    course_of,
    document,
    issues,
    mapped,
    mother,
    rejection_of,
    weight,
)

SECRET = "Jada Quinn 1985-01-15"


def explode(*_: object, **__: object) -> None:
    raise ValueError(SECRET)


def test_an_unforeseen_bug_in_map_single_becomes_an_exception_rejection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mapping_module, "map_course", explode)
    result = map_single(course(), fingerprint_key=KEY)
    assert isinstance(result, Rejection)
    (problem,) = issues(result)
    assert (result.reference, problem["code"]) == ("Bundle", "exception")
    assert "ValueError" in problem["diagnostics"]
    assert SECRET not in repr(result)


def test_an_unforeseen_bug_in_map_batch_entry_becomes_an_exception_rejection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mapping_module, "map_course", explode)
    result = map_batch_entry({"resource": course()}, 4, fingerprint_key=KEY)
    assert isinstance(result, Rejection)
    assert result.reference == "Bundle.entry[4]"
    assert issues(result)[0]["code"] == "exception"
    assert SECRET not in repr(result)


def test_a_huge_chart_number_is_rejected_without_echo() -> None:
    problem = issues(rejection_of(course(chart="7" * 10_000_000)))[0]
    assert problem["code"] == "value"
    assert "7777" not in problem["diagnostics"]


def test_huge_strings_everywhere_do_not_break_the_mapping() -> None:
    huge = "x/" * 1_000_000
    patient = child(meta={"profile": [huge + "Patient-child-vr"]}, gender=huge, birthDate=huge)
    bundle = document(mother(name=[{"family": huge}]), patient, weight(3000, subject=huge))
    assert len(course_of(bundle).children) == 1


def nested_provisions(depth: int, innermost: dict) -> dict:
    provision = innermost
    for _ in range(depth):
        provision = {"type": "permit", "provision": [provision]}
    return provision


def test_a_deep_deny_provision_is_found_without_recursion() -> None:
    provision = nested_provisions(4_000, {"type": "deny"})
    assert course_of(course(consent("active", provision=provision))).consent_granted is False


def test_a_provision_tree_too_large_to_walk_is_not_granted() -> None:
    # past 10,000 nodes the walk stops and counts the Consent as not granted: cheap and safe
    provision = nested_provisions(50_000, {"type": "permit"})
    assert course_of(course(consent("active", provision=provision))).consent_granted is False


def test_a_deep_permit_only_tree_within_the_limit_is_granted() -> None:
    provision = nested_provisions(4_000, {"type": "permit"})
    assert course_of(course(consent("active", provision=provision))).consent_granted is True


def test_deeply_nested_junk_in_an_entry_is_harmless() -> None:
    junk: list = []
    for _ in range(50_000):
        junk = [junk]
    assert isinstance(mapped(course({"resourceType": "Observation", "code": junk})), CourseOfCare)


def test_non_ascii_digits_are_not_a_stamp() -> None:
    fullwidth_year = "\uff12\uff10\uff12\uff14"  # what int() would happily read as 2024
    bundle = course(chart="患者-①", meta={"lastUpdated": f"{fullwidth_year}-01-01T00:00:00Z"})
    problem = issues(rejection_of(bundle))[0]
    assert (problem["code"], problem["expression"]) == ("invalid", ["Bundle.meta.lastUpdated"])


def test_a_bundle_with_many_entries_maps() -> None:
    observations = [weight(3000 + index) for index in range(5_000)]
    assert only_weight(course(*observations)) == 3000


def only_weight(bundle: dict) -> int | None:
    (found,) = course_of(bundle).children
    return found.birth_weight_grams
