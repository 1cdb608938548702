"""The chart number and the stale-update guard's stamp."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from ingestion.fhir import Rejection
from tests.fhir.builders import course, course_of, document, issues, mapped, rejection_of


def only_issue(bundle: dict) -> dict:
    (problem,) = issues(rejection_of(bundle))
    return problem


# chart number


def test_the_chart_number_is_the_bundle_identifier_value() -> None:
    assert course_of(course(chart="2019NJ15075")).external_record_id == "2019NJ15075"


def test_the_chart_number_is_stripped() -> None:
    assert course_of(course(chart="  C-1 \n")).external_record_id == "C-1"


@pytest.mark.parametrize("chart", [None, "", "   ", 15075, ["C-1"], {"value": "C-1"}, True])
def test_a_missing_or_non_string_chart_number_is_rejected_as_required(chart: object) -> None:
    problem = only_issue(course(chart=chart))
    assert (problem["code"], problem["expression"]) == ("required", ["Bundle.identifier.value"])


def test_a_bundle_without_identifier_is_rejected_as_required() -> None:
    bundle = course()
    del bundle["identifier"]
    assert only_issue(bundle)["code"] == "required"


def test_an_absurdly_long_chart_number_is_rejected_as_value() -> None:
    problem = only_issue(course(chart="9" * 201))
    assert (problem["code"], problem["expression"]) == ("value", ["Bundle.identifier.value"])


@pytest.mark.parametrize("chart", ["C-\x00-1", "C-\x07", "C-\ud800", "C-\x85-1"])
def test_a_chart_number_the_registry_cannot_store_is_rejected_as_value(chart: str) -> None:
    # PostgreSQL text refuses NUL; a lone surrogate cannot be encoded as UTF-8.
    problem = only_issue(course(chart=chart))
    assert (problem["code"], problem["expression"]) == ("value", ["Bundle.identifier.value"])
    assert chart not in problem["diagnostics"]


def test_a_chart_number_of_200_characters_is_accepted() -> None:
    assert course_of(course(chart="9" * 200)).external_record_id == "9" * 200


def test_a_rejection_carries_the_chart_number_when_it_is_known() -> None:
    assert rejection_of(document(chart="C-1")).external_record_id == "C-1"


def test_a_rejection_reports_every_failed_rule_at_once() -> None:
    found = issues(rejection_of(document(chart=None, timestamp="soon")))
    assert [problem["code"] for problem in found] == [
        "required",
        "invalid",
        "structure",
        "structure",
    ]


# stamp


def test_meta_last_updated_is_the_stamp() -> None:
    result = course_of(course(meta={"lastUpdated": "2024-03-10T08:15:00.5+01:00"}))
    assert result.source_updated_at == datetime(
        2024, 3, 10, 8, 15, 0, 500000, tzinfo=timezone(timedelta(hours=1))
    )


def test_meta_last_updated_wins_over_timestamp() -> None:
    bundle = course(meta={"lastUpdated": "2024-03-10T00:00:00Z"}, timestamp="2020-01-01T00:00:00Z")
    assert course_of(bundle).source_updated_at == datetime(2024, 3, 10, tzinfo=UTC)


def test_timestamp_is_the_stamp_without_last_updated() -> None:
    result = course_of(course(timestamp="2022-01-24T17:06:54.9051424+00:00"))
    assert result.source_updated_at == datetime(2022, 1, 24, 17, 6, 54, 905142, tzinfo=UTC)


def test_a_naive_stamp_reads_as_utc() -> None:
    result = course_of(course(timestamp="2024-03-10T08:15:00"))
    assert result.source_updated_at == datetime(2024, 3, 10, 8, 15, tzinfo=UTC)


def test_no_stamp_is_none() -> None:
    assert course_of(course()).source_updated_at is None


@pytest.mark.parametrize(
    ("fields", "expression"),
    [
        ({"meta": {"lastUpdated": "yesterday"}}, "Bundle.meta.lastUpdated"),
        ({"meta": {"lastUpdated": 1700000000}}, "Bundle.meta.lastUpdated"),
        ({"timestamp": "2024-13-01T00:00:00Z"}, "Bundle.timestamp"),
        ({"timestamp": "2024-03-10T08:15:00+25:00"}, "Bundle.timestamp"),
        ({"timestamp": ""}, "Bundle.timestamp"),
        (
            {"meta": {"lastUpdated": "bad"}, "timestamp": "2024-03-10T00:00:00Z"},
            "Bundle.meta.lastUpdated",
        ),
    ],
)
def test_a_present_but_unparseable_stamp_is_rejected_as_invalid(
    fields: dict, expression: str
) -> None:
    problem = only_issue(course(**fields))
    assert (problem["code"], problem["expression"]) == ("invalid", [expression])
    assert "yesterday" not in problem["diagnostics"]


# not a Bundle at all


@pytest.mark.parametrize(
    "body", [None, [], "Bundle", 3, {"resourceType": "Patient"}, {"entry": []}]
)
def test_a_body_that_is_not_a_bundle_is_rejected_as_structure(body: object) -> None:
    result = mapped(body)
    assert isinstance(result, Rejection)
    (problem,) = issues(result)
    assert (problem["code"], problem["expression"]) == ("structure", ["Bundle.resourceType"])
