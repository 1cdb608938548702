"""The pipeline with real Celery worker processes on PostgreSQL and Redis.

* A worker SIGKILLed in the middle of a batch: the ingestion finishes later (the beat
  recovery re-enqueues it once the lease runs out) with every record applied exactly once.
* Two workers processing two ingestions of one practice that touch the same charts and the
  same fingerprints: the outcome is that of a serial order.
"""

from __future__ import annotations

import uuid

import pytest
from django.test import override_settings

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from registry.models import Record, RecordVersion
from registry.selectors import record_resemblance
from tests.factories import batch, course, letters
from tests.ingestion.conftest import Api, ingestion_id_of, mint
from tests.workers import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def api(client):
    from registry.models import Practice

    practice = Practice.objects.create(slug="st-mary")
    return Api(client, mint(practice), practice)


def finished(ingestion_id):
    def check():
        ingestion = Ingestion.objects.get(id=ingestion_id)
        return ingestion if ingestion.finished else None

    return check


@override_settings(REGISTRY_CHUNK_ENTRIES=10)
def test_a_worker_killed_mid_batch_leaves_every_record_applied_exactly_once(api, tmp_path):
    courses = [course(f"K-{i}", family=f"Family{letters(i)}") for i in range(1000)]
    fast_recovery = {
        "REGISTRY_LEASE_SECONDS": "3",
        "REGISTRY_RECOVERY_INTERVAL_SECONDS": "1",
        "REGISTRY_RECOVERY_GRACE_SECONDS": "1",
    }
    with celery_worker(tmp_path, "doomed", **fast_recovery) as doomed:
        ingestion_id = uuid.UUID(ingestion_id_of(api.submit(batch(*courses))))
        wait_for(
            lambda: OutcomeChunk.objects.filter(ingestion_id=ingestion_id).count() >= 5,
            message="the first chunks to be applied",
            interval=0.01,
        )
        doomed.kill()
    ingestion = Ingestion.objects.get(id=ingestion_id)
    assert ingestion.status == Ingestion.Status.PROCESSING, "killed too late to prove anything"
    remaining = StagedChunk.objects.filter(ingestion_id=ingestion_id).count()
    assert 0 < remaining < 100

    with celery_worker(tmp_path, "survivor", beat=True, **fast_recovery):
        ingestion = wait_for(finished(ingestion_id), message="recovery to finish the batch")

    assert ingestion.status == Ingestion.Status.COMPLETED
    assert (ingestion.accepted_count, ingestion.rejected_count) == (1000, 0)
    assert ingestion.attempts >= 2
    assert Record.objects.count() == 1000
    assert set(Record.objects.values_list("version", flat=True)) == {1}
    assert RecordVersion.objects.count() == 1000
    assert not Record.objects.filter(suspected_duplicate=True).exists()
    outcomes = OutcomeChunk.objects.filter(ingestion_id=ingestion_id)
    seqs = sorted(outcomes.values_list("seq", flat=True))
    assert seqs == list(range(100))
    receipt = api.receipt(str(ingestion_id)).json()
    references = [entry["reference"] for entry in receipt["outcome"]["accepted"]]
    assert references == [f"Bundle.entry[{i}]" for i in range(1000)]
    assert not StagedChunk.objects.filter(ingestion_id=ingestion_id).exists()


def submit_together(api, *bodies):
    """Stage every body in one transaction: its commit publishes all the tasks together."""
    from django.db import transaction

    with transaction.atomic():
        return [ingestion_id_of(api.submit(body)) for body in bodies]


@override_settings(REGISTRY_CHUNK_ENTRIES=25)
def test_two_workers_on_overlapping_charts_and_fingerprints_match_a_serial_order(api, tmp_path):
    shared = 100
    # The twins come first and at the same positions, so both workers reach pair i together.
    first = batch(
        *(course(f"X-{i}", family=f"Twin{letters(i)}") for i in range(shared)),
        *(course(f"C-{i}", family=f"Shared{letters(i)}", weight_grams=3000) for i in range(shared)),
    )
    second = batch(
        *(course(f"Y-{i}", family=f"Twin{letters(i)}") for i in range(shared)),
        *(course(f"C-{i}", family=f"Shared{letters(i)}", weight_grams=3100) for i in range(shared)),
    )
    with celery_worker(tmp_path, "one") as one, celery_worker(tmp_path, "two") as two:
        ids = submit_together(api, first, second)
        done = [wait_for(finished(i), message="both ingestions") for i in ids]
        for worker in (one, two):
            assert "ingestion.tasks.process_ingestion" in worker.output()
    # They really ran at the same time: each started before the other completed.
    assert done[0].started_at < done[1].completed_at
    assert done[1].started_at < done[0].completed_at

    assert [d.status for d in done] == [Ingestion.Status.COMPLETED] * 2
    assert sum(d.accepted_count for d in done) == 4 * shared
    assert sum(d.rejected_count for d in done) == 0
    for i in range(shared):
        # The same chart from both: created by one, amended by the other, never twice.
        chart = Record.objects.get(external_record_id=f"C-{i}")
        assert chart.version == 2
        assert list(chart.versions.values_list("version", flat=True).order_by("version")) == [1, 2]
        # The same fingerprint under two new charts: whichever came second is flagged.
        twins = Record.objects.filter(external_record_id__in=[f"X-{i}", f"Y-{i}"])
        flagged = [t for t in twins if t.suspected_duplicate]
        assert len(flagged) == 1, f"twin pair {i}: {[t.suspected_duplicate for t in twins]}"
        other = next(t for t in twins if not t.suspected_duplicate)
        assert record_resemblance(record=flagged[0]).record_ids == [other.pk]
    assert Record.objects.count() == 3 * shared
