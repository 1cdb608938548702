"""A queued ingestion whose message is lost is published again; one still waiting is not.

A web process can die between committing a submission and publishing its message, and Redis
can restart empty; the beat's recovery republishes what no worker has claimed after 30 s,
unless its message still waits in the broker's queue behind a busy worker (the queue is
read at its tail: ingestion.messaging.queue_tail). A client retrying with the same Idempotency-Key
republishes it at once. Tasks are safe to run twice.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import timedelta

import orjson
import pytest
from django.utils import timezone

from ingestion.models import Ingestion
from ingestion.pipeline.recovery import ingestions_to_recover
from tests.factories import batch, course
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


# -- Only a lost message is published again (ingestion.messaging.queue_tail) ---------------------


def broker_client():
    from config.celery import app

    with app.connection_for_write() as conn:
        return conn.default_channel.client


@pytest.fixture
def empty_queue():
    """The broker's queue as a fresh deployment has it: nothing left by earlier tests."""
    broker_client().delete("celery")
    yield
    broker_client().delete("celery")


def submitted_apart(count: int, *, batches: bool = False) -> list[uuid.UUID]:
    """``count`` singles (or 1-course batches) of as many practices, each publishing its own
    message (the singles flag cleared after each, as a worker's claim clears it), their
    ``enqueued_at`` set 60 s ago, a millisecond apart, in queue order."""
    from ingestion.intake.services import ingestion_submit
    from ingestion.intake.submission import parse_submission
    from ingestion.messaging.singles_flag import singles_message_taken
    from registry.models import Practice

    ids = []
    for i in range(count):
        practice = Practice.objects.create(slug=f"clinic-{i}")
        body = orjson.dumps(batch(course(f"C-{i}")) if batches else course(f"C-{i}"))
        submission = parse_submission(body, chunk_entries=250, chunk_bytes=1 << 22)
        ingestion, _ = ingestion_submit(
            practice=practice, submission=submission, idempotency_key=None
        )
        ids.append(ingestion.id)
        singles_message_taken()
    start = timezone.now() - timedelta(seconds=60)
    for i, ingestion_id in enumerate(ids):
        Ingestion.objects.filter(id=ingestion_id).update(
            enqueued_at=start + timedelta(milliseconds=i)
        )
    return ids


@pytest.mark.django_db(transaction=True)
def test_messages_still_in_the_queue_are_not_published_again(empty_queue):
    from ingestion.tasks import recover_ingestions

    ids = submitted_apart(5)
    assert recover_ingestions() == 0
    assert [published(str(i)) for i in ids] == [1] * 5


@pytest.mark.django_db(transaction=True)
def test_a_message_lost_ahead_of_the_queue_is_published_again(empty_queue, settings):
    """Its web process died between the commit and the publish: the message never was."""
    from ingestion.tasks import recover_ingestions

    settings.REGISTRY_RECOVERY_GRACE_SECONDS = 10
    lost, *waiting = submitted_apart(4)
    raws = broker_client().lrange("celery", 0, -1)
    (message,) = [raw for raw in raws if str(lost).encode() in raw]
    broker_client().lrem("celery", 0, message)
    Ingestion.objects.filter(id=lost).update(enqueued_at=timezone.now() - timedelta(minutes=5))
    assert recover_ingestions() == 1
    assert published(str(lost)) == 1
    assert [published(str(i)) for i in waiting] == [1] * 3


@pytest.mark.django_db(transaction=True)
def test_with_the_queue_emptied_every_old_queued_batch_is_published_again(empty_queue):
    """Redis restarted without its data: every message is gone."""
    from ingestion.tasks import recover_ingestions

    ids = submitted_apart(3, batches=True)
    broker_client().delete("celery")
    assert recover_ingestions() == 3
    assert [published(str(i)) for i in ids] == [1] * 3


def test_with_the_queue_emptied_the_waiting_singles_get_one_message(empty_queue):
    """The oldest single's message is published again as the waiting singles' message: its
    claim takes the others (up to REGISTRY_CLAIM_SINGLES, then publishes for the next), so a
    backlog of singles is not published again one by one."""
    from ingestion.pipeline.process import ingestion_process
    from ingestion.tasks import recover_ingestions

    ids = submitted_apart(3)
    broker_client().delete("celery")
    assert recover_ingestions() == 1
    assert [published(str(i)) for i in ids] == [1, 0, 0]
    assert recover_ingestions() == 0  # the flag says a message is on its way
    ingestion_process(ids[0])
    assert set(Ingestion.objects.values_list("status", flat=True)) == {"completed"}


@pytest.mark.django_db(transaction=True)
def test_no_single_is_published_again_while_a_claim_of_singles_is_under_way(empty_queue):
    """A claim in progress takes the waiting singles, or publishes for the next when full:
    the recovery leaves them to it, and takes them up once its lease has run out."""
    claimed, waiting = submitted_apart(2)
    broker_client().delete("celery")
    Ingestion.objects.filter(id=claimed).update(
        status=Ingestion.Status.PROCESSING, lease_expires_at=timezone.now() + timedelta(minutes=1)
    )
    assert ingestions_to_recover() == []
    Ingestion.objects.filter(id=claimed).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert ingestions_to_recover() == [claimed, waiting]  # abandoned; the singles' message
