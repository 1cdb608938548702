"""A batch handed back after a turn (ingestion.pipeline.turns), without a worker: its
message is published again, and the recovery leaves it to that message unless it is lost."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from ingestion.models import Ingestion
from ingestion.pipeline.claims import claim
from ingestion.pipeline.recovery import ingestions_to_recover
from ingestion.pipeline.turns import hand_back
from tests.factories import batch, course
from tests.ingestion.conftest import ingestion_id_of
from tests.ingestion.messaging.test_republish import empty_queue, published  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_queue")]


@override_settings(REGISTRY_CHUNK_ENTRIES=10)
def test_a_handed_back_batch_is_left_to_its_message_unless_that_is_lost(api, settings):
    ingestion_id = uuid.UUID(
        ingestion_id_of(api.submit(batch(*(course(f"H-{i}") for i in range(30)))))
    )
    assert claim(ingestion_id) is not None
    before = published(str(ingestion_id))

    hand_back(ingestion_id)

    ingestion = Ingestion.objects.get(id=ingestion_id)
    assert ingestion.status == Ingestion.Status.PROCESSING
    assert published(str(ingestion_id)) == before + 1  # at the back of the queue
    assert ingestion_id not in ingestions_to_recover()  # its lease ended, its message waits
    assert claim(ingestion_id) is not None  # which takes it at once

    claimed_and_dead = Ingestion.objects.filter(id=ingestion_id)
    now = timezone.now()  # the lease of that claim ran out: it was taken after the publish
    claimed_and_dead.update(
        enqueued_at=now - timedelta(seconds=2), lease_expires_at=now - timedelta(seconds=1)
    )
    assert ingestion_id in ingestions_to_recover()  # a claim after the hand-back died

    hand_back(ingestion_id)
    claimed_and_dead.update(enqueued_at=None)  # as after a failed publish
    assert ingestion_id in ingestions_to_recover()

    long_ago = timezone.now() - timedelta(seconds=settings.REGISTRY_REQUEUE_AFTER_SECONDS + 60)
    claimed_and_dead.update(enqueued_at=long_ago, lease_expires_at=long_ago)
    assert ingestion_id in ingestions_to_recover()  # its message is lost
