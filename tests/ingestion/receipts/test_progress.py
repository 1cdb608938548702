"""X-Progress and the receipt's ``progress`` while a batch is queued and processing."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings
from django.test import override_settings
from django.utils import timezone

from ingestion.fhir import practice_fingerprint_key
from ingestion.models import Ingestion
from ingestion.pipeline.chunks import apply_chunk as _apply_chunk
from ingestion.pipeline.chunks import decrypt_and_map as _decrypt_and_map
from ingestion.pipeline.chunks import next_staged as _next_staged
from ingestion.pipeline.claims import claim as _claim
from ingestion.pipeline.process import ingestion_process
from tests.factories import batch, course
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db


def apply_first_chunk(ingestion_id):
    """What a worker does for one chunk, stopping there (as if it were still busy)."""
    claim = _claim(ingestion_id)
    key = practice_fingerprint_key(
        django_settings.REGISTRY_FINGERPRINT_KEY.encode(), claim.practice_id
    )
    staged = _next_staged(ingestion_id, after=-1)
    _apply_chunk(claim, staged, _decrypt_and_map(claim, staged, key))


@override_settings(REGISTRY_CHUNK_ENTRIES=10)
def test_a_batch_in_progress_says_how_far_it_has_come(api):
    response = api.submit(batch(*(course(f"P-{i}") for i in range(30))))
    ingestion_id = ingestion_id_of(response)

    queued = api.receipt(ingestion_id)
    assert queued["X-Progress"] == "0 of 30 entries"
    assert queued.json()["progress"] == {"processed": 0, "total": 30, "unit": "entries"}
    assert queued.json()["status"] == "queued"

    apply_first_chunk(Ingestion.objects.get(id=ingestion_id).id)
    processing = api.receipt(ingestion_id)
    assert processing.json()["status"] == "processing"
    assert processing["X-Progress"] == "10 of 30 entries"
    assert processing.json()["progress"] == {"processed": 10, "total": 30, "unit": "entries"}
    assert processing["Retry-After"]

    # the busy worker is gone: its lease runs out and the rest is processed
    Ingestion.objects.filter(id=ingestion_id).update(lease_expires_at=timezone.now())
    ingestion_process(Ingestion.objects.get(id=ingestion_id).id)
    done = api.receipt(ingestion_id)
    assert done.json()["status"] == "completed"
    assert "X-Progress" not in done and "progress" not in done.json()


def test_a_single_course_counts_one_record_not_its_resources(api):
    body = course("P-1")
    assert len(body["entry"]) > 1
    response = api.receipt(ingestion_id_of(api.submit(body)))
    assert response["X-Progress"] == "0 of 1 entry"
    assert response.json()["progress"] == {"processed": 0, "total": 1, "unit": "entries"}
