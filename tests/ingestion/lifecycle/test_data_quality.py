"""Data quality at intake: warnings in receipts, and what the record keeps (never a birth date)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingestion.models import Ingestion
from ingestion.pipeline.process import ingestion_process
from registry.models import Child, Record
from tests.factories import batch, course
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db

EDIT_FLAG = "http://hl7.org/fhir/us/vr-common-library/StructureDefinition/BypassEditFlag"


def ingest(api, body, *, queued: datetime | None = None):
    """Submit, (optionally) date its receipt, process as a worker would; the receipt."""
    response = api.submit(body)
    assert response.status_code == 202, response.content
    ingestion_id = ingestion_id_of(response)
    if queued is not None:
        Ingestion.objects.filter(id=ingestion_id).update(queued_at=queued)
    ingestion_process(Ingestion.objects.get(id=ingestion_id).id)
    receipt = api.receipt(ingestion_id).json()
    assert receipt["status"] == "completed"
    return receipt


def test_an_implausible_value_is_stored_with_a_warning_in_the_accepted_entry(api):
    receipt = ingest(api, course("C-1", weight_grams=9200))  # at 39 weeks
    assert receipt["rejected"] == 0
    (entry,) = receipt["outcome"]["accepted"]
    assert entry["operation_outcome"]["resourceType"] == "OperationOutcome"
    weight, for_gestation = entry["operation_outcome"]["issue"]
    assert (weight["severity"], weight["code"]) == ("warning", "value")
    assert weight["details"]["coding"][0]["code"] == "birth-weight-range"
    assert weight["expression"] == ["Bundle.entry[2].resource.valueQuantity"]
    assert for_gestation["details"]["coding"][0]["code"] == "birth-weight-for-gestational-age"
    assert for_gestation["expression"] == [
        "Bundle.entry[2].resource.valueQuantity",
        "Bundle.entry[3].resource.valueQuantity",
    ]
    record = Record.objects.get(id=entry["submission_uuid"])
    assert record.drew_warning is True
    assert Child.objects.get(record=record).birth_weight_grams == 9200


def test_a_plausible_course_has_no_operation_outcome(api):
    receipt = ingest(api, course("C-1"))
    (entry,) = receipt["outcome"]["accepted"]
    assert "operation_outcome" not in entry
    assert Record.objects.get(id=entry["submission_uuid"]).drew_warning is False


def test_warnings_in_a_batch_name_the_entry_and_the_element(api):
    receipt = ingest(api, batch(course("C-1"), course("C-2", apgar5=12)))
    first, second = receipt["outcome"]["accepted"]
    assert "operation_outcome" not in first
    (issue,) = second["operation_outcome"]["issue"]
    assert issue["expression"] == ["Bundle.entry[1].resource.entry[4].resource.valueInteger"]


def test_a_verified_value_draws_no_warning_through_the_api(api):
    flag = {
        "url": EDIT_FLAG,
        "valueCodeableConcept": {"coding": [{"code": "1"}]},
    }
    body = course("C-1", weight_grams=9200)  # verified: neither rule reading it warns
    body["entry"][2]["resource"]["valueQuantity"]["extension"] = [flag]
    (entry,) = ingest(api, body)["outcome"]["accepted"]
    assert "operation_outcome" not in entry


def test_an_amendment_that_corrects_the_value_clears_the_warning(api):
    ingest(api, course("C-1", weight_grams=9200, last_updated="2024-03-10T10:00:00Z"))
    receipt = ingest(api, course("C-1", weight_grams=3200, last_updated="2024-03-11T10:00:00Z"))
    (entry,) = receipt["outcome"]["accepted"]
    assert entry["amended"] is True and "operation_outcome" not in entry
    assert Record.objects.get(external_record_id="C-1").drew_warning is False


@pytest.mark.parametrize(
    ("queued", "bucket"),
    [
        (datetime(2024, 3, 14, 23, 0, tzinfo=UTC), "days_0_5"),
        (datetime(2024, 3, 15, 1, 0, tzinfo=UTC), "days_6_10"),
        (datetime(2024, 3, 25, 9, 0, tzinfo=UTC), "days_over_10"),
    ],
)
def test_timeliness_is_computed_from_the_birth_and_the_day_it_was_queued(api, queued, bucket):
    ingest(api, course("C-1", born="2024-03-09"), queued=queued)
    assert Record.objects.get(external_record_id="C-1").timeliness == bucket


def test_an_amendment_keeps_the_first_receipts_timeliness(api):
    first = datetime(2024, 3, 10, 9, 0, tzinfo=UTC)
    ingest(api, course("C-1", last_updated="2024-03-10T08:00:00Z"), queued=first)
    late = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
    ingest(api, course("C-1", weeks=40, last_updated="2024-05-01T08:00:00Z"), queued=late)
    record = Record.objects.get(external_record_id="C-1")
    assert (record.version, record.timeliness) == (2, "days_0_5")


def test_a_consent_decision_is_kept(api):
    ingest(api, batch(course("C-1"), course("C-2", consent=None), course("C-3", consent="draft")))
    decided = dict(Record.objects.values_list("external_record_id", "consent_decided"))
    assert decided == {"C-1": True, "C-2": False, "C-3": False}
