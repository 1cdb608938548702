"""What each practice sent, kept per day (registry.statistics.submissions) by every path that
finishes an ingestion: a batch's last chunk, singles claimed together, a completion with
nothing left to apply, a failure. Each always equals a recount of the ingestions, a receipt's
purge changes neither, and a sandbox's reset takes its days out with its ingestions."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db.models import F
from django.test import override_settings
from django.utils import timezone

from ingestion.models import Ingestion, StagedChunk
from ingestion.pipeline.completion import ingestion_complete
from ingestion.pipeline.process import ingestion_attempt, ingestion_process
from ingestion.receipts.retention import receipts_purge
from ingestion.sandbox.services import sandbox_reset
from registry.models import Practice, SubmissionCount
from registry.statistics.counts import received_day
from registry.statistics.submissions import submissions_differences, submissions_stored
from tests.factories import batch, course, retraction_document
from tests.ingestion.conftest import Api, ingestion_id_of, mint

pytestmark = pytest.mark.django_db

NO_CHART = {**course("X"), "identifier": {}}  # rejected: a course needs a chart number


def submitted(api: Api, body, *, days_ago: int = 0) -> uuid.UUID:
    response = api.submit(body)
    assert response.status_code == 202, response.content
    identifier = uuid.UUID(ingestion_id_of(response))
    if days_ago:
        Ingestion.objects.filter(id=identifier).update(
            queued_at=F("queued_at") - timedelta(days=days_ago)
        )
    return identifier


def sent(practice: Practice) -> dict:
    """The practice's kept days: (ingestions, courses, accepted, rejected, latest receipt)."""
    return {
        day: counted for (_, day), counted in submissions_stored(practice_id=practice.pk).items()
    }


def day_of(identifier: uuid.UUID):
    queued_at = Ingestion.objects.get(id=identifier).queued_at
    return received_day(queued_at), queued_at


@override_settings(REGISTRY_CHUNK_ENTRIES=2)
def test_a_batch_counts_once_on_the_day_it_was_received_when_its_last_chunk_completes(api):
    identifier = submitted(api, batch(course("A"), NO_CHART, course("B")), days_ago=2)
    assert sent(api.practice) == {}  # queued: not counted yet
    ingestion_process(identifier)
    day, queued_at = day_of(identifier)
    assert sent(api.practice) == {day: (1, 3, 2, 1, queued_at)}
    ingestion_process(identifier)  # a message delivered twice counts nothing twice
    assert sent(api.practice) == {day: (1, 3, 2, 1, queued_at)}
    assert submissions_differences() == {}


def test_singles_claimed_together_count_each_and_keep_the_latest_receipt_time(api, other_api):
    ids = [
        submitted(api, course("A")),
        submitted(api, retraction_document("NOT-ON-FILE")),  # rejected
        submitted(api, course("B")),
    ]
    other = submitted(other_api, course("A"))
    ingestion_process(ids[0])  # its claim takes the practice's other two along
    assert set(Ingestion.objects.filter(id__in=ids).values_list("status", flat=True)) == {
        "completed"
    }
    day, latest = day_of(ids[2])
    assert sent(api.practice) == {day: (3, 3, 2, 1, latest)}
    # The claim takes other practices' waiting singles along too, each counted for its own.
    assert sent(other_api.practice) == {day_of(other)[0]: (1, 1, 1, 0, day_of(other)[1])}
    ingestion_process(other)  # its own message finds it done: nothing counted twice
    assert sent(other_api.practice) == {day_of(other)[0]: (1, 1, 1, 0, day_of(other)[1])}
    assert submissions_differences() == {}


@override_settings(REGISTRY_CHUNK_ENTRIES=2)
def test_a_failed_ingestion_counts_its_courses_not_accepted_as_rejected(api):
    identifier = submitted(api, batch(course("A"), course("B"), course("C"), NO_CHART))
    last = StagedChunk.objects.filter(ingestion_id=identifier).order_by("-seq").first()
    StagedChunk.objects.filter(id=last.id).update(ciphertext=b"\x01unreadable")
    ingestion_attempt(identifier)  # the first chunk applies, the second cannot be read
    failed = Ingestion.objects.get(id=identifier)
    assert (failed.status, failed.accepted_count, failed.rejected_count) == ("failed", 2, 0)
    day, queued_at = day_of(identifier)
    assert sent(api.practice) == {day: (1, 4, 2, 2, queued_at)}
    assert submissions_differences() == {}


def test_a_completion_with_nothing_left_to_apply_counts_too(api):
    """A worker died after the last chunk's transaction: the next claim completes it."""
    identifier = submitted(api, course("A"))
    StagedChunk.objects.filter(ingestion_id=identifier).delete()
    Ingestion.objects.filter(id=identifier).update(status="processing")
    ingestion_complete(identifier)
    day, queued_at = day_of(identifier)
    assert sent(api.practice) == {day: (1, 1, 0, 0, queued_at)}
    assert submissions_differences() == {}


@override_settings(REGISTRY_RECEIPT_RETENTION_DAYS=90)
def test_a_purged_receipt_still_counts_as_before(api):
    identifier = submitted(api, batch(course("A"), NO_CHART))
    ingestion_process(identifier)
    Ingestion.objects.filter(id=identifier).update(completed_at=timezone.now() - timedelta(days=91))
    before = sent(api.practice)
    assert receipts_purge().receipts == 1
    assert Ingestion.objects.get(id=identifier).receipt_purged_at is not None
    assert sent(api.practice) == before
    assert submissions_differences() == {}


def test_a_sandbox_reset_takes_its_days_out_with_its_ingestions(client, api):
    sandbox = Practice.objects.create(slug="acme-test", sandbox=True)
    sandbox_api = Api(client, mint(sandbox), sandbox)
    for body in (course("A"), course("B"), batch(course("C"), NO_CHART)):
        ingestion_process(submitted(sandbox_api, body))
    ingestion_process(submitted(api, course("A")))
    assert sent(sandbox)
    kept = sent(api.practice)
    sandbox_reset(practice=sandbox, batch=2)  # small batches: each one equals a recount
    assert not SubmissionCount.objects.filter(practice=sandbox).exists()
    assert sent(api.practice) == kept
    assert submissions_differences() == {}
