"""records_apply's safety net: a value the database refuses costs only its own record."""

from __future__ import annotations

import pytest

from ingestion.fhir import Child, CourseOfCare
from ingestion.lifecycle.applying import records_apply
from registry.models import Practice, Record

pytestmark = pytest.mark.django_db


def course(chart: str, **fields) -> CourseOfCare:
    return CourseOfCare(
        reference=f"Bundle.entry[{chart}]",
        external_record_id=chart,
        fingerprint=None,
        children=(Child(birth_order=1, outcome="live_birth"),),
        consent_granted=False,
        **fields,
    )


def test_a_value_the_database_refuses_rejects_only_that_record():
    practice = Practice.objects.create(slug="st-mary")
    results = [
        course("1"),
        course("2", ig_version="v" * 65),  # longer than the column: PostgreSQL refuses it
        course("3"),
    ]
    outcome = records_apply(practice=practice, results=results, ingestion_id=None)
    assert [entry["external_record_id"] for entry in outcome.accepted] == ["1", "3"]
    (rejected,) = outcome.rejected
    assert rejected["reference"] == "Bundle.entry[2]"
    assert rejected["operation_outcome"]["issue"][0]["code"] == "exception"
    assert "vvvv" not in rejected["operation_outcome"]["issue"][0]["diagnostics"]
    assert sorted(Record.objects.values_list("external_record_id", flat=True)) == ["1", "3"]
