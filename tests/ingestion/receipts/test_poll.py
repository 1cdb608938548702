"""The poll of an unfinished ingestion: one statement, and a queued answer kept in Redis."""

from __future__ import annotations

import uuid

import orjson
import pytest
from django.db import transaction
from django.test import override_settings

from ingestion.models import Ingestion
from ingestion.pipeline.claims import claim
from ingestion.pipeline.completion import ingestion_fail
from ingestion.pipeline.process import ingestion_process
from ingestion.receipts.cache import Kept, forget, keep_receipt, kept_receipt
from ingestion.receipts.selectors import ingestion_receipt
from lib.cache import redis_client
from tests.factories import batch, course
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db


def queued(api) -> str:
    return ingestion_id_of(api.submit(batch(course("Q-1"), course("Q-2"))))


def expire(ingestion_id: str) -> None:
    """As if the kept answer had run out."""
    redis_client().delete(f"registry:receipt:{ingestion_id}")


def test_a_queued_poll_is_one_statement_then_none(api, django_assert_num_queries):
    ingestion_id = queued(api)
    api.receipt(ingestion_id)  # the key's lookup is cached from here on
    expire(ingestion_id)

    with django_assert_num_queries(1):  # the row and its progress in one round trip
        missed = api.receipt(ingestion_id)
    with django_assert_num_queries(0):
        kept = api.receipt(ingestion_id)

    assert missed.json()["status"] == kept.json()["status"] == "queued"


def test_a_processing_poll_is_one_statement(api, django_assert_num_queries):
    ingestion_id = queued(api)
    claim(uuid.UUID(ingestion_id))
    api.receipt(ingestion_id)

    with django_assert_num_queries(1):
        response = api.receipt(ingestion_id)
    with django_assert_num_queries(1):  # a processing receipt is never kept
        api.receipt(ingestion_id)

    assert response.json()["status"] == "processing"


def test_the_kept_answer_is_the_uncached_answer_byte_for_byte(api):
    ingestion_id = queued(api)
    expected = orjson.dumps(ingestion_receipt(Ingestion.objects.get(id=ingestion_id)))

    missed, kept = api.receipt(ingestion_id), api.receipt(ingestion_id)

    assert missed.content == kept.content == expected
    for header in ("Content-Type", "X-Progress", "Retry-After"):
        assert missed[header] == kept[header]
    assert kept["X-Progress"] == "0 of 2 entries"


def test_a_claim_forgets_the_kept_answer(api):
    ingestion_id = queued(api)
    assert api.receipt(ingestion_id).json()["status"] == "queued"

    claim(uuid.UUID(ingestion_id))

    assert api.receipt(ingestion_id).json()["status"] == "processing"


def test_completion_forgets_the_kept_answer(api):
    ingestion_id = queued(api)
    assert api.receipt(ingestion_id).json()["status"] == "queued"

    ingestion_process(uuid.UUID(ingestion_id))

    assert api.receipt(ingestion_id).json()["status"] == "completed"


def test_failing_a_queued_ingestion_forgets_the_kept_answer(api):
    ingestion_id = queued(api)
    assert api.receipt(ingestion_id).json()["status"] == "queued"

    ingestion_fail(uuid.UUID(ingestion_id), "given up")

    assert api.receipt(ingestion_id).json()["status"] == "failed"


def test_another_practice_cannot_read_a_kept_answer(api, other_api):
    ingestion_id = queued(api)
    assert api.receipt(ingestion_id).status_code == 200  # kept

    response = other_api.receipt(ingestion_id)

    assert response.status_code == 404
    assert response.json()["resourceType"] == "OperationOutcome"


def test_an_answer_read_before_the_change_is_not_kept_after_it():
    """A poll that read ``queued`` just before a claim committed stores nothing afterwards."""
    ingestion_id = uuid.uuid4()
    forget([ingestion_id])  # the claim

    keep_receipt(practice_id=1, ingestion_id=ingestion_id, kept=Kept("0 of 1 entry", b"{}"))

    assert kept_receipt(practice_id=1, ingestion_id=ingestion_id) is None


def test_the_commit_forgets_again_what_was_kept_while_the_change_was_open(
    api, django_capture_on_commit_callbacks
):
    """Another process's poll, reading before the claim committed, kept ``queued`` after the
    marker had gone: the commit forgets it again."""
    ingestion_id = queued(api)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        claim(uuid.UUID(ingestion_id))
        expire(ingestion_id)
        kept = Kept("0 of 2 entries", b'{"status":"queued"}')
        keep_receipt(practice_id=api.practice.id, ingestion_id=uuid.UUID(ingestion_id), kept=kept)

    assert api.receipt(ingestion_id).json()["status"] == "processing"


@override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}})
def test_without_redis_nothing_is_kept(api):
    """The embedded default: every poll reads the database, and answers as before."""
    ingestion_id = queued(api)
    api.receipt(ingestion_id)

    assert api.receipt(ingestion_id).json()["status"] == "queued"
    claim(uuid.UUID(ingestion_id))
    assert api.receipt(ingestion_id).json()["status"] == "processing"
