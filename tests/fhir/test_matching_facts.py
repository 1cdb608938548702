"""What each child carries for duplicate matching: its declared order and a keyed birth time."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from ingestion.fhir import CourseOfCare
from tests.fhir.builders import BIRTH_TIME, KEY, child, course_of, document, mother


def timed(moment: str | None, **fields: Any) -> dict[str, Any]:
    if moment is None:
        return child(**fields)
    extension = {"extension": [{"url": BIRTH_TIME, "valueDateTime": moment}]}
    return child(_birthDate=extension, **fields)


def keyed_course(*children: dict[str, Any]) -> CourseOfCare:
    return course_of(document(mother(), *children))


def time_key(moment: str | None, **fields: Any) -> str | None:
    return keyed_course(timed(moment, **fields)).children[0].birth_time_key


def test_the_time_key_is_hmac_of_the_fingerprint_and_the_utc_minute() -> None:
    course = keyed_course(timed("2024-03-09T08:15:42-07:00"))
    message = f"birth-time\x1f{course.fingerprint}\x1f2024-03-09T15:15".encode()
    assert course.children[0].birth_time_key == hmac.new(KEY, message, hashlib.sha256).hexdigest()


def test_the_same_minute_in_another_offset_or_second_gives_the_same_key() -> None:
    assert time_key("2024-03-09T08:15:42-07:00") == time_key("2024-03-09T15:15:03Z")


def test_another_minute_gives_another_key() -> None:
    assert time_key("2024-03-09T08:15:00-07:00") != time_key("2024-03-09T08:16:00-07:00")


def test_no_time_or_a_date_alone_gives_no_key() -> None:
    assert time_key(None) is None
    assert time_key("2024-03-09") is None
    assert time_key("not a time") is None


def test_no_fingerprint_gives_no_time_key() -> None:
    course = course_of(document(mother(name=[]), timed("2024-03-09T08:15:00Z")))
    assert course.fingerprint is None
    assert course.children[0].birth_time_key is None


def test_the_clear_time_is_kept_nowhere_in_the_course() -> None:
    course = keyed_course(timed("2024-03-09T08:15:00-07:00"))
    assert "08:15" not in repr(course) and "15:15" not in repr(course)


def test_multiple_birth_is_the_declared_integer_only() -> None:
    twins = keyed_course(
        timed(None, multipleBirthInteger=2), timed(None, patient_id="child-2")
    ).children
    assert [c.multiple_birth for c in twins] == [2, None]
    assert [c.birth_order for c in twins] == [2, 2]  # the stored order falls back to place


def test_an_absurd_multiple_birth_integer_is_not_declared() -> None:
    for value in (0, 21, "2", True):
        assert (
            keyed_course(timed(None, multipleBirthInteger=value)).children[0].multiple_birth is None
        )
