"""Receipt retention: outcome rows purged after REGISTRY_RECEIPT_RETENTION_DAYS, counts kept.

A finished ingestion's per-record outcome is purged by the beat in bounded batches once it is
older than the retention; the receipt then says so (``outcome`` null, ``outcomePurgedAt``),
keeps its status and counts, and the Idempotency-Key still returns the original 202.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ingestion.models import Ingestion, OutcomeChunk
from ingestion.pipeline.process import ingestion_process
from ingestion.receipts.retention import receipt_purge_step, receipts_due, receipts_purge
from ingestion.receipts.selectors import ingestion_receipt
from tests.factories import batch, course
from tests.ingestion.conftest import Api, ingestion_id_of, mint
from tests.workers import celery_worker, wait_for

DAYS = 90


def ingested(api: Api, body, *, key: str | None = None, days_ago: int = 0) -> Ingestion:
    """Submitted, processed as a worker would, and finished ``days_ago``."""
    response = api.submit(body, idempotency_key=key)
    assert response.status_code == 202, response.content
    identifier = uuid.UUID(ingestion_id_of(response))
    ingestion_process(identifier)
    finished = timezone.now() - timedelta(days=days_ago)
    Ingestion.objects.filter(id=identifier).update(completed_at=finished)
    return Ingestion.objects.get(id=identifier)


def a_batch(prefix: str, size: int):
    return batch(*[course(f"{prefix}-{i}", family=f"Family{prefix}{i}") for i in range(size)])


@pytest.mark.django_db
@override_settings(REGISTRY_RECEIPT_RETENTION_DAYS=DAYS, REGISTRY_CHUNK_ENTRIES=2)
def test_a_receipt_past_its_retention_keeps_its_counts_and_says_its_outcome_was_purged(api):
    no_chart = {**course("R-3"), "identifier": {}}  # rejected: a course needs a chart number
    old = ingested(api, batch(course("R-1"), course("R-2"), no_chart), key="k-1", days_ago=91)
    before = api.receipt(str(old.id)).json()
    assert before["outcome"] is not None and "outcomePurgedAt" not in before

    purged = receipts_purge()

    assert (purged.receipts, purged.rows) == (1, 2)  # two chunks of two entries
    assert not OutcomeChunk.objects.filter(ingestion=old).exists()
    receipt = api.receipt(str(old.id)).json()
    assert receipt["outcome"] is None
    for field in ("id", "status", "accepted", "rejected", "completedAt"):
        assert receipt[field] == before[field]
    assert (receipt["accepted"], receipt["rejected"]) == (2, 1)
    old.refresh_from_db()
    assert receipt["outcomePurgedAt"] == old.receipt_purged_at.isoformat()
    # The streamed receipt and the selector's say the same.
    assert receipt == ingestion_receipt(old)
    # The Idempotency-Key is kept with the ingestion: the original 202, nothing re-ingested.
    again = api.submit(batch(course("R-1")), idempotency_key="k-1")
    assert again.status_code == 202
    assert ingestion_id_of(again) == str(old.id)
    assert Ingestion.objects.count() == 1


@pytest.mark.django_db
@override_settings(REGISTRY_RECEIPT_RETENTION_DAYS=DAYS)
def test_only_finished_receipts_older_than_the_retention_are_purged(api):
    young = ingested(api, course("Y-1"), days_ago=89)
    old = ingested(api, course("O-1"), days_ago=91)
    failed = ingested(api, course("F-1"), days_ago=0)
    Ingestion.objects.filter(id=failed.id).update(
        status=Ingestion.Status.FAILED, completed_at=None, failed_at=old.completed_at
    )
    waiting = Ingestion.objects.create(
        practice=api.practice, kind=Ingestion.Kind.SINGLE, queued_at=old.completed_at
    )

    assert set(receipts_due(before=timezone.now() - timedelta(days=DAYS), limit=10)) == {
        old.id,
        failed.id,
    }
    assert receipts_purge().receipts == 2

    purged = set(Ingestion.objects.filter(receipt_purged_at__isnull=False).values_list("id"))
    assert purged == {(old.id,), (failed.id,)}
    assert OutcomeChunk.objects.filter(ingestion=young).exists()
    assert api.receipt(str(young.id)).json()["outcome"] is not None
    failed_receipt = api.receipt(str(failed.id)).json()
    assert (failed_receipt["status"], failed_receipt["outcome"]) == ("failed", None)
    assert "outcomePurgedAt" in failed_receipt
    waiting.refresh_from_db()
    assert waiting.receipt_purged_at is None
    assert receipts_purge().receipts == 0  # nothing is purged twice


@pytest.mark.django_db
@override_settings(REGISTRY_RECEIPT_RETENTION_DAYS=DAYS, REGISTRY_CHUNK_ENTRIES=1)
def test_outcome_rows_are_deleted_in_bounded_transactions(api):
    old = ingested(api, a_batch("B", 5), days_ago=100)
    assert OutcomeChunk.objects.filter(ingestion=old).count() == 5
    now = timezone.now()

    steps = [receipt_purge_step(ingestion_id=old.id, now=now, rows=2) for _ in range(3)]

    assert steps == [(2, False), (2, False), (1, True)]
    old.refresh_from_db()
    assert old.receipt_purged_at == now

    # A run deletes at most `rows` rows per statement, whatever the receipt's size.
    other = ingested(api, a_batch("C", 5), days_ago=100)
    with CaptureQueriesContext(connection) as queries:
        assert receipts_purge(rows=2).rows == 5
    deletes = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("DELETE")]
    assert len(deletes) == 3
    assert not OutcomeChunk.objects.filter(ingestion=other).exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_beat_purges_receipts_past_their_retention(client, tmp_path):
    from registry.models import Practice

    practice = Practice.objects.create(slug="st-mary")
    api = Api(client, mint(practice), practice)
    old = ingested(api, course("BEAT-1"), days_ago=DAYS + 1)
    young = ingested(api, course("BEAT-2"), days_ago=DAYS - 1)

    every_second = {"REGISTRY_RECEIPT_PURGE_INTERVAL_SECONDS": "1"}
    with celery_worker(tmp_path, "retention", beat=True, **every_second) as worker:
        purged = wait_for(
            lambda: Ingestion.objects.filter(id=old.id, receipt_purged_at__isnull=False).first(),
            message="the beat to purge the old receipt",
        )
    assert "retention purged 1 receipts" in worker.output()
    assert not OutcomeChunk.objects.filter(ingestion=old).exists()
    receipt = api.receipt(str(old.id)).json()
    assert receipt["outcomePurgedAt"] == purged.receipt_purged_at.isoformat()
    young.refresh_from_db()
    assert young.receipt_purged_at is None
    assert OutcomeChunk.objects.filter(ingestion=young).exists()
