"""``POST Bundle/$validate``: a preview of every lifecycle row, that agrees with ingestion,
and that stores nothing (row counts, sequences and the captured logs before and after)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection

from ingestion.fhir import CourseOfCare
from ingestion.lifecycle.entries import ChunkOutcome
from ingestion.lifecycle.preview import preview_outcome
from keys.models import INGEST_READ
from tests.factories import batch, course, delete_entry, retraction_document
from tests.ingestion.conftest import Api, mint
from tests.ingestion.lifecycle.test_lifecycle import ingest
from tests.ingestion.lifecycle.test_nvss import load, void

pytestmark = pytest.mark.django_db


def validate(api: Api, body: Any, **options: Any):
    return api.validate(body, **options)


def previews(api: Api, body: Any) -> list[dict[str, Any]]:
    """The information issues of a 200 answer, one per course of care, in entry order."""
    response = validate(api, body)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/fhir+json")
    outcome = response.json()
    assert outcome["resourceType"] == "OperationOutcome"
    return [i for i in outcome["issue"] if i["severity"] == "information"]


def preview(api: Api, body: Any) -> str:
    (only,) = previews(api, body)
    return only["diagnostics"]


# -- each row of the lifecycle table -----------------------------------------------------------


def test_a_new_chart_would_be_created(api):
    (issue,) = previews(api, course("C-1"))
    assert issue["diagnostics"] == "would create a record for chart number C-1 (version 1)"
    assert (issue["code"], issue["expression"]) == ("informational", ["Bundle"])


def test_a_new_chart_resembling_a_record_on_file_would_be_flagged(api):
    ingest(api, course("C-1"))
    assert preview(api, course("C-2")).startswith("would be flagged as a suspected duplicate")


def test_a_chart_on_file_would_be_amended_with_its_next_version(api):
    ingest(api, course("C-1"))
    ingest(api, course("C-1", weight_grams=3400))
    assert preview(api, course("C-1", weight_grams=3500)).startswith("would amend (version 3)")


def test_a_stale_update_would_be_rejected(api):
    ingest(api, course("C-1", last_updated="2024-03-10T10:00:00Z"))
    (issue,) = previews(api, course("C-1", last_updated="2024-03-10T09:00:00Z"))
    assert issue["diagnostics"].startswith("would be rejected: Stale update ignored")
    assert (issue["severity"], issue["code"]) == ("information", "conflict")


def test_a_correction_that_would_duplicate_another_record_would_be_rejected(api):
    ingest(api, course("C-1", family="Alpha"))
    ingest(api, course("C-2", family="Beta"))
    (issue,) = previews(api, course("C-2", family="Alpha"))
    assert issue["diagnostics"].startswith("would be rejected: The correction would make")
    assert issue["code"] == "conflict"


def test_a_retraction_would_retract_and_one_of_an_unknown_chart_would_be_rejected(api):
    ingest(api, course("C-1"))
    assert preview(api, retraction_document("C-1")).startswith("would retract")
    assert preview(api, batch(delete_entry("C-1"))).startswith("would retract")
    (unknown,) = previews(api, retraction_document("C-9"))
    assert unknown["diagnostics"].startswith("would be rejected: No record with this chart")
    assert unknown["code"] == "not-found"


def test_a_voided_chart_sent_again_would_come_back_as_a_further_version(api):
    ingest(api, course("C-1"))
    ingest(api, retraction_document("C-1"))
    assert preview(api, course("C-1")).startswith("would amend (version 2)")


def test_an_nvss_void_would_retract_its_block_or_nothing(api):
    assert preview(api, void(block_count=3)).startswith("would retract nothing")
    ingest(api, course("2019UT48858"))
    ingest(api, course("2019UT48859", family="Other"))
    assert preview(api, void(block_count=3)) == (
        "would retract 2 record(s) of this NVSS void's block"
    )


def test_a_structural_fault_is_an_error_naming_the_element_after_its_preview(api):
    no_mother = course("C-2")
    no_mother["entry"] = no_mother["entry"][1:]
    outcome = validate(api, batch(course("C-1"), no_mother)).json()
    first, second, error = outcome["issue"]
    assert first["diagnostics"].startswith("would create") and first["expression"] == [
        "Bundle.entry[0]"
    ]
    assert second["severity"] == "information"
    assert second["diagnostics"].startswith("would be rejected: The course of care has no mother")
    assert second["expression"] == ["Bundle.entry[1]"]
    assert (error["severity"], error["code"]) == ("error", "structure")
    assert error["expression"] == ["Bundle.entry[1].resource.entry"]


def test_every_issue_names_its_entry(api):
    ingest(api, course("C-1"))
    no_chart = course("")
    body = batch(course("C-2"), no_chart, retraction_document("C-1"), delete_entry("C-9"))
    outcome = validate(api, body).json()
    for issue in outcome["issue"]:
        (expression,) = issue["expression"]
        assert expression.startswith("Bundle.entry["), issue


def test_a_bundle_holding_nothing_still_gets_an_outcome_with_an_issue():
    # Not reachable through the door today (a body without a Bundle or DELETE entry is one
    # course of care), but an OperationOutcome must have an issue whatever comes.
    (issue,) = preview_outcome([], ChunkOutcome())["issue"]
    assert issue["diagnostics"].startswith("would do nothing")


# -- several courses in one body: as the pipeline would apply them -----------------------------


def test_one_chart_twice_in_a_body_would_be_created_then_amended(api):
    first, second = previews(api, batch(course("C-1"), course("C-1", weight_grams=3400)))
    assert first["diagnostics"].startswith("would create")
    assert second["diagnostics"].startswith("would amend (version 2)")


def test_two_courses_of_one_body_resembling_each_other_the_second_would_be_flagged(api):
    first, second = previews(api, batch(course("C-1"), course("C-2")))
    assert first["diagnostics"].startswith("would create")
    assert second["diagnostics"].startswith("would be flagged as a suspected duplicate")


def verdicts_of_receipt(receipt: dict[str, Any]) -> dict[str, str]:
    found = {}
    for entry in receipt["outcome"]["accepted"]:
        if entry.get("voided") or "voided_count" in entry:
            verdict = "retract"
        elif entry["amended"]:
            verdict = f"amend {entry['version']}" + (
                " flagged" if entry.get("suspected_duplicate") else ""
            )
        else:
            verdict = "duplicate" if entry.get("suspected_duplicate") else "create"
        found[entry["reference"]] = verdict
    for entry in receipt["outcome"]["rejected"]:
        found[entry["reference"]] = "rejected " + entry["operation_outcome"]["issue"][0]["code"]
    return found


def verdicts_of_preview(issues: list[dict[str, Any]]) -> dict[str, str]:
    found = {}
    for issue in issues:
        text = issue["diagnostics"]
        if text.startswith("would retract"):
            verdict = "retract"
        elif text.startswith("would amend"):
            verdict = "amend " + text.split("(version ")[1].split(")")[0]
            verdict += " flagged" if "flagged as a suspected duplicate" in text else ""
        elif text.startswith("would be flagged"):
            verdict = "duplicate"
        elif text.startswith("would create"):
            verdict = "create"
        else:
            assert text.startswith("would be rejected: "), text
            verdict = f"rejected {issue['code']}"
        (reference,) = issue["expression"]
        found[reference] = verdict
    return found


def test_the_preview_agrees_with_what_ingesting_the_same_body_does(api):
    ingest(api, course("ON-FILE", family="Alpha", last_updated="2024-03-10T10:00:00Z"))
    ingest(api, course("OTHER", family="Beta"))
    ingest(api, course("GONE", family="Gamma"))
    ingest(api, retraction_document("GONE"))
    no_mother = course("BAD", family="Delta")
    no_mother["entry"] = no_mother["entry"][1:]
    body = batch(
        course("NEW", family="Epsilon"),
        course("NEW", family="Epsilon", weight_grams=3000),  # the same chart again
        course("TWIN", family="Epsilon"),  # resembles NEW, sent just before
        course("LIKE", family="Alpha"),  # resembles ON-FILE
        course("ON-FILE", family="Alpha", last_updated="2024-03-10T09:00:00Z"),  # stale
        course("OTHER", family="Alpha"),  # would duplicate ON-FILE
        course("GONE", family="Gamma"),  # comes back
        no_mother,
        delete_entry("NEW"),
        delete_entry("NEVER"),
        retraction_document("OTHER"),
        {"resource": {"resourceType": "Patient"}},  # ignored in a batch
    )
    predicted = verdicts_of_preview(previews(api, body))
    happened = verdicts_of_receipt(ingest(api, body))
    assert predicted == happened
    assert set(predicted.values()) >= {
        "create",
        "amend 2",
        "duplicate",
        "rejected conflict",
        "rejected structure",
        "rejected not-found",
        "retract",
    }


# -- warnings carried by the course (issue 23's CourseOfCare.warnings) -------------------------


@dataclass(frozen=True)
class WarnedCourse(CourseOfCare):
    warnings: tuple[dict[str, Any], ...] = ()


def test_the_courses_warnings_follow_its_preview_once_each():
    warning = {"severity": "warning", "code": "value", "diagnostics": "Implausible weight."}
    course_ = WarnedCourse("Bundle.entry[0]", "C-1", None, (), False, warnings=(warning,))
    accepted = {"reference": "Bundle.entry[0]", "external_record_id": "C-1", "amended": False}
    planned = ChunkOutcome(
        accepted=[accepted | {"operation_outcome": {"issue": [warning]}}], rejected=[]
    )
    outcome = preview_outcome([course_], planned)
    head, only_warning = outcome["issue"]
    assert head["diagnostics"].startswith("would create")
    assert only_warning == warning | {"expression": ["Bundle.entry[0]"]}


# -- nothing stored ------------------------------------------------------------------------------


def row_counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        counts = {}
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = cursor.fetchone()[0]
        return counts


def sequence_values() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sequencename, last_value FROM pg_sequences")
        return dict(cursor.fetchall())


SUBMITTED_VALUES = ["Quinn", "Jada", "Zebedee", "1990-05-20", "2024-03-09", "84116", "SECRET-CHART"]


def test_validate_stores_nothing_and_logs_no_submitted_value(api, caplog):
    ingest(api, course("ON-FILE"))
    body = batch(
        course("SECRET-CHART", family="Zebedee"),
        course("ON-FILE"),
        course("ON-FILE", last_updated="2000-01-01T00:00:00Z"),
        retraction_document("ON-FILE"),
        void(block_count=2),
        delete_entry("SECRET-CHART"),
    )
    counts, sequences = row_counts(), sequence_values()
    caplog.set_level(logging.DEBUG)
    for _ in range(2):
        assert validate(api, body).status_code == 200
    assert row_counts() == counts
    assert sequence_values() == sequences
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert not [value for value in SUBMITTED_VALUES if value in logged]


@pytest.mark.django_db(transaction=True)
def test_at_the_top_level_the_preview_runs_read_only_and_stores_nothing(client, practice):
    api = Api(client, mint(practice), practice)
    counts = row_counts()
    assert preview(api, course("C-1")).startswith("would create")
    assert row_counts() == counts


# -- the door ------------------------------------------------------------------------------------


def test_validate_needs_the_write_scope_and_a_key(api, client, practice):
    reader = mint_reader(client, practice)
    assert validate(api, course("C-1"), token=reader).status_code == 403
    response = client.post(
        "/api/registry/fhir/Bundle/$validate", data=b"{}", content_type="application/fhir+json"
    )
    assert response.status_code == 401
    assert response.json()["issue"][0]["code"] == "login"


def mint_reader(client, practice) -> str:
    from keys.services import key_rotate

    return key_rotate(practice=practice, scopes=[INGEST_READ], via="command")[1]


def test_validate_has_its_own_rate_limit_counter(api, settings):
    settings.REGISTRY_RATE_LIMIT = "2/m"
    assert api.submit(course("C-1")).status_code == 202
    assert api.submit(course("C-2")).status_code == 202
    assert api.submit(course("C-3")).status_code == 429
    assert validate(api, course("C-1")).status_code == 200
    assert validate(api, course("C-1")).status_code == 200
    limited = validate(api, course("C-1"))
    assert limited.status_code == 429 and "Retry-After" in limited


def test_a_body_with_too_many_entries_is_413_saying_to_validate_in_parts(api, settings):
    settings.REGISTRY_VALIDATE_MAX_ENTRIES = 3
    assert validate(api, batch(*(course(f"C-{i}") for i in range(3)))).status_code == 200
    response = validate(api, batch(*(course(f"C-{i}") for i in range(4))))
    assert response.status_code == 413
    (issue,) = response.json()["issue"]
    assert (issue["code"], issue["expression"]) == ("too-costly", ["Bundle.entry"])
    assert "in parts" in issue["diagnostics"] and "at most 3" in issue["diagnostics"]


def test_the_door_checks_are_those_of_a_submit(api, settings):
    for body in (b"", b"[]", b'{"resourceType": "Patient"}', b"{nope"):
        response = validate(api, body)
        assert response.status_code == 400, body
        assert response.json()["issue"][0]["expression"] == ["Bundle.resourceType"]
    assert validate(api, course("C-1"), content_type="text/plain").status_code == 415
    settings.REGISTRY_MAX_BODY_BYTES = 100
    assert validate(api, course("C-1")).status_code == 413


def test_nvss_messages_are_previewed_as_they_would_be_ingested(api):
    assert preview(api, load("BirthRecordSubmissionMessage.json")).startswith("would create")
    ingest(api, load("BirthRecordSubmissionMessage.json"))
    assert preview(api, load("BirthRecordUpdateMessage.json")).startswith("would amend (version 2)")
    (ack,) = previews(api, load("BirthRecordAcknowledgementMessage.json"))
    assert ack["diagnostics"].startswith("would be rejected: ") and ack["code"] == "not-supported"


def test_another_practices_records_play_no_part(api, other_api):
    ingest(other_api, course("C-1"))
    assert preview(api, course("C-1")).startswith("would create a record")


@pytest.mark.django_db(transaction=True)
def test_at_the_top_level_the_plan_reads_one_read_only_snapshot(practice, monkeypatch):
    """Observed from inside the plan: PostgreSQL itself refuses a write, and every read of the
    plan (records, then match keys) sees one snapshot."""
    from ingestion.lifecycle import deciding, preview

    seen = []
    plan = deciding.Lifecycle.plan

    def observed(self, results):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('transaction_read_only'), "
                "current_setting('transaction_isolation')"
            )
            seen.append(cursor.fetchone())
        return plan(self, results)

    monkeypatch.setattr(deciding.Lifecycle, "plan", observed)
    preview.records_plan(practice=practice, results=[])
    assert seen == [("on", "repeatable read")]
