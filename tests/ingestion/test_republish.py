"""A queued ingestion that has not started is published again promptly.

A web process can die between committing a submission and publishing its message; the
beat's recovery republishes what no worker has claimed after 30 s, and a client retrying
with the same Idempotency-Key republishes it at once. Tasks are safe to run twice.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from ingestion.models import Ingestion
from ingestion.pipeline import ingestions_to_recover
from tests.factories import course
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db


def published(ingestion_id: str) -> int:
    """How many messages for this ingestion wait in the broker's queue."""
    from config.celery import app

    with app.connection_for_read() as conn:
        client = conn.default_channel.client
        raws = client.lrange("celery", 0, -1)
    count = 0
    for raw in raws:
        body = json.loads(base64.b64decode(json.loads(raw)["body"]))
        count += body[0] == [ingestion_id]
    return count


def test_a_queued_ingestion_nobody_claimed_for_45_seconds_is_recovered(api):
    ingestion_id = uuid.UUID(ingestion_id_of(api.submit(course("C-1"))))
    Ingestion.objects.filter(id=ingestion_id).update(
        enqueued_at=timezone.now() - timedelta(seconds=45)
    )
    assert ingestion_id in ingestions_to_recover()


def test_a_just_published_ingestion_is_left_alone(api):
    ingestion_id = uuid.UUID(ingestion_id_of(api.submit(course("C-1"))))
    assert ingestion_id not in ingestions_to_recover()


def test_a_retry_with_the_same_key_publishes_a_waiting_ingestion_again(api):
    first = api.submit(course("C-1"), idempotency_key="k-1")
    ingestion_id = ingestion_id_of(first)
    before = published(ingestion_id)
    retry = api.submit(course("C-1"), idempotency_key="k-1")
    assert retry.status_code == 202
    assert ingestion_id_of(retry) == ingestion_id
    assert published(ingestion_id) == before + 1
    assert Ingestion.objects.count() == 1


def test_a_retry_does_not_publish_a_started_ingestion(api):
    ingestion_id = ingestion_id_of(api.submit(course("C-1"), idempotency_key="k-1"))
    Ingestion.objects.filter(id=ingestion_id).update(status=Ingestion.Status.COMPLETED)
    before = published(ingestion_id)
    api.submit(course("C-1"), idempotency_key="k-1")
    assert published(ingestion_id) == before
