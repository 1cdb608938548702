"""The consent decision (spec 2.5): recorded on every course, never blocking."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from tests.fhir.builders import consent, course, course_of


def decision(*resources: dict) -> tuple[bool, datetime | None]:
    result = course_of(course(*resources))
    return result.consent_granted, result.consent_datetime


def test_an_active_consent_without_deny_is_granted() -> None:
    assert decision(consent("active"))[0] is True


@pytest.mark.parametrize("status", ["proposed", "rejected", "inactive", "draft", "ACTIVE", None, 1])
def test_any_other_status_is_not_granted(status: object) -> None:
    assert decision(consent(status))[0] is False  # type: ignore[arg-type]


def test_no_consent_is_not_granted_and_does_not_block() -> None:
    assert decision() == (False, None)


def test_a_top_level_deny_provision_is_not_granted() -> None:
    assert decision(consent("active", provision={"type": "deny"}))[0] is False


def test_a_deny_nested_at_any_depth_is_not_granted() -> None:
    nested: dict = {"type": "deny"}
    for _ in range(50):
        nested = {"type": "permit", "provision": [nested]}
    assert decision(consent("active", provision=nested))[0] is False


def test_permit_provisions_only_are_granted() -> None:
    provision = {"type": "permit", "provision": [{"type": "permit"}, {"provision": []}]}
    assert decision(consent("active", provision=provision))[0] is True


def test_a_denied_consent_is_still_a_course_of_care() -> None:
    assert decision(consent("rejected", provision={"type": "deny"})) == (False, None)


def test_only_the_first_consent_is_read() -> None:
    assert decision(consent("active"), consent("rejected"))[0] is True
    assert decision(consent("rejected"), consent("active"))[0] is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-01T10:00:00Z", datetime(2024, 3, 1, 10, tzinfo=UTC)),
        (
            "2024-03-01T10:00:00.1234567-05:00",
            datetime(2024, 3, 1, 10, 0, 0, 123456, tzinfo=timezone(-timedelta(hours=5))),
        ),
        ("2024-03-01T10:00:00", datetime(2024, 3, 1, 10, tzinfo=UTC)),  # naive reads as UTC
        ("2024-03-01", datetime(2024, 3, 1, tzinfo=UTC)),  # date only: midnight UTC
    ],
)
def test_the_consent_datetime_is_kept_as_an_aware_datetime(value: str, expected: datetime) -> None:
    found = decision(consent("active", dateTime=value))[1]
    assert found == expected
    assert found is not None
    assert found.tzinfo is not None


@pytest.mark.parametrize("value", ["yesterday", "2024-02-30", "2024-03-01T25:00:00Z", 20240301, ""])
def test_an_unparseable_consent_datetime_is_dropped_without_blocking(value: object) -> None:
    assert decision(consent("active", dateTime=value)) == (True, None)
