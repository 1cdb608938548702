"""GET /api/registry/fhir/ingestions/{ingestion}: the receipt (spec 2.6, 4.2)."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from ingestion.pipeline.process import ingestion_process
from keys.models import INGEST_WRITE, KeyEvent
from keys.services import key_rotate
from tests.factories import course
from tests.ingestion.conftest import ingestion_id_of
from tests.ingestion.intake.test_submit import assert_outcome

pytestmark = pytest.mark.django_db


def submitted(api) -> str:
    return ingestion_id_of(api.submit(course("C-1")))


def test_a_queued_ingestion_has_no_outcome_and_asks_to_retry_later(api):
    ingestion_id = submitted(api)
    response = api.receipt(ingestion_id)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "id": ingestion_id,
        "status": "queued",
        "accepted": 0,
        "rejected": 0,
        "outcome": None,
        "completedAt": None,
        "progress": {"processed": 0, "total": 1, "unit": "entries"},
    }
    assert int(response["Retry-After"]) > 0
    assert response["X-Progress"] == "0 of 1 entry"


def test_a_processing_ingestion_asks_to_retry_later(api):
    ingestion_id = submitted(api)
    Ingestion.objects.filter(id=ingestion_id).update(status=Ingestion.Status.PROCESSING)
    response = api.receipt(ingestion_id)
    assert response.json()["status"] == "processing"
    assert "Retry-After" in response


def test_a_completed_ingestion_has_counts_outcome_and_completion_time(api):
    ingestion_id = submitted(api)
    ingestion_process(uuid.UUID(ingestion_id))
    response = api.receipt(ingestion_id)
    body = response.json()
    assert "Retry-After" not in response
    assert (body["status"], body["accepted"], body["rejected"]) == ("completed", 1, 0)
    assert body["outcome"]["rejected"] == []
    assert body["outcome"]["accepted"][0]["reference"] == "Bundle"
    completed = datetime.fromisoformat(body["completedAt"])
    assert completed.utcoffset() is not None


def test_the_state_machine_stamps_each_step(api):
    ingestion_id = submitted(api)
    ingestion = Ingestion.objects.get(id=ingestion_id)
    assert ingestion.queued_at and not ingestion.started_at and not ingestion.completed_at
    ingestion_process(ingestion.id)
    ingestion.refresh_from_db()
    assert ingestion.status == Ingestion.Status.COMPLETED
    assert ingestion.queued_at <= ingestion.started_at <= ingestion.completed_at
    assert ingestion.attempts == 1 and ingestion.lease_expires_at is None


def test_the_staged_payload_is_gone_once_the_ingestion_completes(api):
    ingestion_id = submitted(api)
    assert StagedChunk.objects.filter(ingestion_id=ingestion_id).exists()
    ingestion_process(uuid.UUID(ingestion_id))
    assert not StagedChunk.objects.filter(ingestion_id=ingestion_id).exists()


def test_processing_twice_changes_nothing(api):
    ingestion_id = uuid.UUID(submitted(api))
    ingestion_process(ingestion_id)
    ingestion_process(ingestion_id)
    assert Ingestion.objects.get(id=ingestion_id).accepted_count == 1
    assert OutcomeChunk.objects.filter(ingestion_id=ingestion_id).count() == 1


def test_a_completed_ingestion_without_entries_has_a_null_outcome(api):
    ingestion_id = submitted(api)
    StagedChunk.objects.filter(ingestion_id=ingestion_id).delete()
    ingestion_process(uuid.UUID(ingestion_id))
    body = api.receipt(ingestion_id).json()
    assert (body["status"], body["outcome"]) == ("completed", None)


def test_an_unreadable_payload_fails_the_ingestion_with_an_operation_outcome(api):
    from ingestion.tasks import process_ingestion

    ingestion_id = submitted(api)
    StagedChunk.objects.filter(ingestion_id=ingestion_id).update(ciphertext=b"\x01" + b"0" * 40)
    process_ingestion.run(ingestion_id)
    body = api.receipt(ingestion_id).json()
    assert body["status"] == "failed"
    assert body["completedAt"] is not None
    rejected = body["outcome"]["rejected"]
    assert rejected[0]["reference"] == "Bundle"
    assert rejected[0]["operation_outcome"]["resourceType"] == "OperationOutcome"
    assert not StagedChunk.objects.filter(ingestion_id=ingestion_id).exists()


def test_an_ingestion_whose_claims_keep_applying_nothing_ends_failed(api, settings):
    settings.REGISTRY_MAX_ATTEMPTS = 2
    ingestion_id = uuid.UUID(submitted(api))
    Ingestion.objects.filter(id=ingestion_id).update(attempts=2, fruitless_claims=2)
    ingestion_process(ingestion_id)  # the third claim is past the limit
    ingestion = Ingestion.objects.get(id=ingestion_id)
    assert ingestion.status == Ingestion.Status.FAILED
    assert ingestion.failure["issue"][0]["code"] == "exception"


@pytest.mark.parametrize("ingestion_id", [str(uuid.uuid4()), "not-a-uuid", "1", "%00", "x" * 300])
def test_an_unknown_or_malformed_id_is_404(api, ingestion_id):
    assert_outcome(api.receipt(ingestion_id), 404, "not-found")


def test_another_practices_ingestion_is_404(api, other_api):
    ingestion_id = submitted(other_api)
    assert_outcome(api.receipt(ingestion_id), 404, "not-found")


def test_without_a_key_it_is_401(api, client):
    response = client.get(f"/api/registry/fhir/ingestions/{submitted(api)}")
    assert_outcome(response, 401, "login")
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_key_without_ingest_read_is_403(api, practice):
    ingestion_id = submitted(api)
    _, write_only = key_rotate(practice=practice, scopes=[INGEST_WRITE], via=KeyEvent.Via.COMMAND)
    assert_outcome(api.receipt(ingestion_id, token=write_only), 403, "forbidden")


def test_a_revoked_key_is_locked_out_at_once(api, practice):
    from keys.services import key_revoke

    ingestion_id = submitted(api)
    key_revoke(practice=practice, via=KeyEvent.Via.COMMAND)
    assert_outcome(api.receipt(ingestion_id), 401, "login")


def test_claims_that_made_progress_do_not_use_up_the_attempts(api, settings):
    settings.REGISTRY_MAX_ATTEMPTS = 2
    ingestion_id = uuid.UUID(submitted(api))
    Ingestion.objects.filter(id=ingestion_id).update(attempts=9, fruitless_claims=0)
    ingestion_process(ingestion_id)
    ingestion = Ingestion.objects.get(id=ingestion_id)
    assert ingestion.status == Ingestion.Status.COMPLETED
    assert (ingestion.attempts, ingestion.fruitless_claims) == (10, 0)
