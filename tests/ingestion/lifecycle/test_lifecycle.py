"""Every row of the record lifecycle table (spec section 3), through the API and the pipeline."""

from __future__ import annotations

import pytest
from django.test import override_settings

from ingestion.models import Ingestion, StagedChunk
from ingestion.pipeline.process import ingestion_process
from registry.models import Attendance, Child, Provider, Record, RecordVersion
from registry.selectors import record_resemblance
from tests.factories import batch, course, delete_entry, letters, retraction_document
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db


def ingest(api, body):
    """Submit, process as a worker would, and return the receipt."""
    response = api.submit(body)
    assert response.status_code == 202, response.content
    ingestion_id = ingestion_id_of(response)
    ingestion_process(Ingestion.objects.get(id=ingestion_id).id)
    receipt = api.receipt(ingestion_id)
    assert receipt.status_code == 200
    return receipt.json()


def only_accepted(receipt):
    assert receipt["status"] == "completed"
    assert receipt["rejected"] == 0, receipt["outcome"]["rejected"]
    assert receipt["accepted"] == 1
    return receipt["outcome"]["accepted"][0]


def only_rejected(receipt):
    assert receipt["status"] == "completed"
    assert receipt["accepted"] == 0, receipt["outcome"]["accepted"]
    assert receipt["rejected"] == 1
    return receipt["outcome"]["rejected"][0]


# -- none -> on file ----------------------------------------------------------------------------


def test_a_new_chart_is_stored_as_version_1_with_only_masked_facts(api):
    entry = only_accepted(ingest(api, course("C-1", weight_grams=3320, weeks=39, apgar5=9)))
    assert entry["reference"] == "Bundle"
    assert entry["external_record_id"] == "C-1"
    assert entry["amended"] is False
    assert "suspected_duplicate" not in entry
    record = Record.objects.get(id=entry["submission_uuid"])
    assert (record.practice, record.external_record_id, record.version) == (api.practice, "C-1", 1)
    assert not record.voided and not record.suspected_duplicate
    assert record.consent_granted is True
    assert record.ig_version == "2.0.0"
    assert record.mother_age_years == 33
    assert record.mother_postal_prefix == "841"
    assert record.birth_year == 2024
    assert len(record.fingerprint) == 64
    child = Child.objects.get(record=record)
    assert (child.outcome, child.sex, child.birth_year) == ("live_birth", "female", 2024)
    assert (child.birth_weight_grams, child.gestational_age_weeks, child.apgar_5) == (3320, 39, 9)
    provider = Provider.objects.get(practice=api.practice)
    assert (provider.stable_id, provider.role, provider.npi) == ("MW-1", "midwife", "1234567893")
    attendance = Attendance.objects.get(record=record)
    assert (attendance.provider, attendance.kind) == (provider, "attended")
    assert RecordVersion.objects.get(record=record).change == "created"


def test_a_new_chart_whose_fingerprint_matches_another_record_is_stored_and_flagged(api):
    first = only_accepted(ingest(api, course("C-1")))
    second = only_accepted(ingest(api, course("C-2")))  # same mother, same birth date
    assert second["suspected_duplicate"] is True
    assert Record.objects.count() == 2
    flagged = Record.objects.get(id=second["submission_uuid"])
    assert flagged.suspected_duplicate
    assert record_resemblance(record=flagged).record_ids == [
        Record.objects.get(id=first["submission_uuid"]).id
    ]
    assert not Record.objects.get(id=first["submission_uuid"]).suspected_duplicate


def test_the_fingerprint_ignores_case_accents_and_the_birth_time(api):
    only_accepted(ingest(api, course("C-1", family="Nuñez", given="Ana")))
    second = only_accepted(ingest(api, course("C-2", family="NUNEZ", given="ana")))
    assert second["suspected_duplicate"] is True


def test_a_different_mother_or_birth_date_is_not_flagged(api):
    only_accepted(ingest(api, course("C-1")))
    assert "suspected_duplicate" not in only_accepted(ingest(api, course("C-2", family="Other")))
    assert "suspected_duplicate" not in only_accepted(ingest(api, course("C-3", born="2024-03-10")))


def test_duplicate_matching_is_scoped_to_the_practice(api, other_api):
    only_accepted(ingest(api, course("C-1")))
    assert "suspected_duplicate" not in only_accepted(ingest(other_api, course("C-1")))


def test_a_chart_number_may_repeat_across_practices(api, other_api):
    only_accepted(ingest(api, course("C-1")))
    entry = only_accepted(ingest(other_api, course("C-1")))
    assert entry["amended"] is False
    assert Record.objects.filter(external_record_id="C-1").count() == 2


# -- on file -> amended ----------------------------------------------------------------------


def test_a_resend_under_the_same_chart_amends_and_keeps_the_previous_values(api):
    first = only_accepted(ingest(api, course("C-1", weight_grams=3000)))
    second = only_accepted(ingest(api, course("C-1", weight_grams=3100)))
    assert second["amended"] is True
    assert second["version"] == 2
    assert second["submission_uuid"] == first["submission_uuid"]
    record = Record.objects.get()
    assert record.version == 2
    assert Child.objects.get(record=record).birth_weight_grams == 3100
    history = list(record.versions.order_by("version").values_list("version", "change", "values"))
    assert [(v, c) for v, c, _ in history] == [(1, "created"), (2, "amended")]
    assert history[0][2]["children"][0]["birth_weight_grams"] == 3000
    assert history[1][2]["children"][0]["birth_weight_grams"] == 3100


def test_an_amendment_with_a_newer_or_equal_stamp_is_applied(api):
    only_accepted(ingest(api, course("C-1", last_updated="2024-03-10T10:00:00Z")))
    same = only_accepted(ingest(api, course("C-1", last_updated="2024-03-10T10:00:00+00:00")))
    newer = only_accepted(ingest(api, course("C-1", last_updated="2024-03-11T10:00:00Z")))
    assert (same["version"], newer["version"]) == (2, 3)


def test_a_stale_update_is_rejected_as_a_conflict_and_changes_nothing(api):
    only_accepted(ingest(api, course("C-1", weight_grams=3000, last_updated="2024-03-10T10:00Z")))
    rejected = only_rejected(
        ingest(api, course("C-1", weight_grams=3999, last_updated="2024-03-09T10:00:00Z"))
    )
    assert rejected["reference"] == "Bundle"
    assert rejected["external_record_id"] == "C-1"
    issue = rejected["operation_outcome"]["issue"][0]
    assert (issue["code"], issue["diagnostics"]) == ("conflict", "Stale update ignored")
    record = Record.objects.get()
    assert record.version == 1
    assert Child.objects.get(record=record).birth_weight_grams == 3000


def test_the_bundle_timestamp_also_guards_against_stale_updates(api):
    newer = course("C-1")
    newer["timestamp"] = "2024-03-10T10:00:00Z"
    older = course("C-1")
    older["timestamp"] = "2024-03-01T10:00:00Z"
    only_accepted(ingest(api, newer))
    assert only_rejected(ingest(api, older))["operation_outcome"]["issue"][0]["code"] == "conflict"


def test_an_amendment_that_would_duplicate_a_different_record_is_a_conflict(api):
    only_accepted(ingest(api, course("C-1", family="Alpha")))
    only_accepted(ingest(api, course("C-2", family="Beta", weight_grams=2000)))
    rejected = only_rejected(ingest(api, course("C-2", family="Alpha", weight_grams=2100)))
    assert rejected["operation_outcome"]["issue"][0]["code"] == "conflict"
    record = Record.objects.get(external_record_id="C-2")
    assert record.version == 1
    assert Child.objects.get(record=record).birth_weight_grams == 2000
    assert Record.objects.count() == 2  # not merged


def test_a_flagged_record_can_still_be_corrected(api):
    only_accepted(ingest(api, course("C-1")))
    only_accepted(ingest(api, course("C-2")))  # flagged: same fingerprint as C-1
    entry = only_accepted(ingest(api, course("C-2", weight_grams=2800)))
    assert (entry["amended"], entry["version"], entry["suspected_duplicate"]) == (True, 2, True)


# -- retractions -----------------------------------------------------------------------------


def test_a_composition_entered_in_error_voids_the_record(api):
    created = only_accepted(ingest(api, course("C-1")))
    entry = only_accepted(ingest(api, retraction_document("C-1")))
    assert entry == {
        "reference": "Bundle",
        "submission_uuid": created["submission_uuid"],
        "external_record_id": "C-1",
        "voided": True,
    }
    record = Record.objects.get()
    assert record.voided and record.voided_at is not None
    assert record.versions.order_by("created_at", "id").last().change == "voided"


@pytest.mark.parametrize("form", ["search", "read"])
def test_a_delete_entry_voids_the_record(api, form):
    only_accepted(ingest(api, course("C-1")))
    receipt = ingest(api, batch(delete_entry("C-1", form=form), kind="transaction"))
    entry = only_accepted(receipt)
    assert (entry["reference"], entry["voided"]) == ("Bundle.entry[0]", True)
    assert Record.objects.get().voided


def test_a_voided_record_is_ignored_by_duplicate_matching(api):
    only_accepted(ingest(api, course("C-1")))
    only_accepted(ingest(api, retraction_document("C-1")))
    assert "suspected_duplicate" not in only_accepted(ingest(api, course("C-2")))


def test_retracting_again_is_a_no_op(api):
    only_accepted(ingest(api, course("C-1")))
    only_accepted(ingest(api, retraction_document("C-1")))
    before = RecordVersion.objects.count()
    entry = only_accepted(ingest(api, retraction_document("C-1")))
    assert entry["voided"] is True
    assert RecordVersion.objects.count() == before
    assert Record.objects.get().voided


def test_a_resend_of_a_voided_chart_is_a_further_version_of_the_same_record(api):
    created = only_accepted(ingest(api, course("C-1")))
    only_accepted(ingest(api, retraction_document("C-1")))
    entry = only_accepted(ingest(api, course("C-1", weight_grams=3500)))
    assert entry["submission_uuid"] == created["submission_uuid"]
    assert (entry["amended"], entry["version"]) == (True, 2)
    record = Record.objects.get()
    assert not record.voided and record.voided_at is None
    changes = list(record.versions.order_by("created_at", "id").values_list("change", flat=True))
    assert changes == ["created", "voided", "revived"]


def test_a_resend_of_a_voided_chart_ignores_the_stale_guard(api):
    only_accepted(ingest(api, course("C-1", last_updated="2024-03-10T10:00:00Z")))
    only_accepted(ingest(api, retraction_document("C-1")))
    entry = only_accepted(ingest(api, course("C-1", last_updated="2024-01-01T00:00:00Z")))
    assert entry["version"] == 2


def test_retracting_an_unknown_chart_is_not_found(api):
    rejected = only_rejected(ingest(api, retraction_document("NOPE")))
    assert rejected["external_record_id"] == "NOPE"
    assert rejected["operation_outcome"]["issue"][0]["code"] == "not-found"
    assert not Record.objects.exists()


def test_retracting_another_practices_chart_is_not_found(api, other_api):
    only_accepted(ingest(other_api, course("C-1")))
    assert only_rejected(ingest(api, retraction_document("C-1")))
    assert not Record.objects.get().voided


# -- batches ----------------------------------------------------------------------------------


def test_the_same_chart_twice_in_one_batch_applies_in_entry_order(api):
    receipt = ingest(api, batch(course("C-1", weight_grams=3000), course("C-1", weight_grams=3100)))
    first, second = receipt["outcome"]["accepted"]
    assert (first["reference"], first["amended"]) == ("Bundle.entry[0]", False)
    assert (second["reference"], second["amended"], second["version"]) == (
        "Bundle.entry[1]",
        True,
        2,
    )
    assert Child.objects.get().birth_weight_grams == 3100
    assert RecordVersion.objects.count() == 2


def test_create_then_retract_in_one_batch(api):
    receipt = ingest(api, batch(course("C-1"), delete_entry("C-1")))
    assert [e.get("voided", False) for e in receipt["outcome"]["accepted"]] == [False, True]
    assert Record.objects.get().voided


def test_one_bad_record_does_not_spoil_the_batch(api):
    no_mother = course("C-2")
    no_mother["entry"] = no_mother["entry"][1:]
    receipt = ingest(api, batch(course("C-1"), no_mother, course("C-3", family="Else")))
    assert (receipt["accepted"], receipt["rejected"]) == (2, 1)
    rejected = receipt["outcome"]["rejected"][0]
    assert rejected["reference"] == "Bundle.entry[1]"
    assert rejected["operation_outcome"]["issue"][0]["code"] == "structure"
    assert set(Record.objects.values_list("external_record_id", flat=True)) == {"C-1", "C-3"}


def test_non_bundle_entries_of_a_batch_are_ignored(api):
    body = batch(course("C-1"))
    body["entry"].append({"resource": {"resourceType": "Patient", "id": "stray"}})
    receipt = ingest(api, body)
    assert (receipt["accepted"], receipt["rejected"]) == (1, 0)


@override_settings(REGISTRY_CHUNK_ENTRIES=3)
def test_a_batch_across_chunks_reports_every_entry_in_order(api):
    bodies = [course(f"C-{i}", family=f"Family{letters(i)}") for i in range(8)]
    receipt = ingest(api, batch(*bodies, delete_entry("C-2"), course("C-0", weight_grams=1)))
    references = [e["reference"] for e in receipt["outcome"]["accepted"]]
    assert references == [f"Bundle.entry[{i}]" for i in range(10)]
    assert receipt["outcome"]["accepted"][9]["version"] == 2
    assert Record.objects.count() == 8
    assert not StagedChunk.objects.exists()


def test_a_chart_number_the_registry_cannot_store_is_rejected_alone(api):
    bad = course("C-\x00-2")  # PostgreSQL text cannot hold NUL
    receipt = ingest(api, batch(course("C-1"), bad, course("C-3", family="Else")))
    assert receipt["accepted"] == 2
    assert receipt["rejected"] == 1
    assert receipt["outcome"]["rejected"][0]["reference"] == "Bundle.entry[1]"


def test_a_resend_of_a_merged_chart_comes_back_unmerged_and_flagged_again(api):
    from django.contrib.auth.models import User

    from registry.models import Membership
    from registry.review.services import record_merge

    survivor = Record.objects.get(id=only_accepted(ingest(api, course("C-1")))["submission_uuid"])
    duplicate = Record.objects.get(id=only_accepted(ingest(api, course("C-2")))["submission_uuid"])
    reviewer = User.objects.create_user("rita", is_staff=True)
    Membership.objects.create(user=reviewer, practice=api.practice, role="reviewer")
    record_merge(record=duplicate, survivor=survivor, by=reviewer)
    duplicate.refresh_from_db()
    assert (duplicate.voided, duplicate.merged_into) == (True, survivor)

    entry = only_accepted(ingest(api, course("C-2", weight_grams=2950)))
    assert (entry["amended"], entry["suspected_duplicate"]) == (True, True)
    duplicate.refresh_from_db()
    assert not duplicate.voided
    assert duplicate.merged_into is None
    assert duplicate.suspected_duplicate
