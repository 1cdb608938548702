"""Fair shares between practices (ingestion.pipeline.turns), with a real Celery worker.

A batch is applied in turns: between its chunks the waiting singles are served, and another
batch waiting ends its turn. The order is read from the database (receipt rows are numbered
as they are written; one worker process writes them one after another), never the clock:

* a single sent while another practice's batch is applied completes before that batch does;
* two practices' batches sent together take alternate turns;
* a worker SIGKILLed while batches and singles interleave loses nothing and applies nothing
  twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from itertools import pairwise

import pytest
from django.test import override_settings

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from registry.models import Record, RecordVersion
from registry.statistics.counts import counts_differences
from tests.factories import batch, course, letters
from tests.ingestion.conftest import Api, ingestion_id_of, mint
from tests.ingestion.messaging.test_republish import empty_queue  # noqa: F401 (a fixture)
from tests.workers import Worker, celery_worker, wait_for

pytestmark = [
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_queue"),
]


@pytest.fixture(scope="module")
def worker(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Worker]:
    """One worker process (``--pool=solo``) for the module's order tests."""
    with (
        django_db_blocker.unblock(),
        celery_worker(
            tmp_path_factory.mktemp("w"), "fair", REGISTRY_SINGLES_GATHER_SECONDS="0"
        ) as w,
    ):
        yield w


@pytest.fixture(autouse=True)
def published_at_once(settings):
    settings.REGISTRY_SINGLES_GATHER_SECONDS = 0  # no gathering window: the order is the test's


def api_for(client, slug: str) -> Api:
    from registry.models import Practice

    practice = Practice.objects.create(slug=slug)
    return Api(client, mint(practice), practice)


def submitted(api: Api, body) -> uuid.UUID:
    response = api.submit(body)
    assert response.status_code == 202, response.content
    return uuid.UUID(ingestion_id_of(response))


def courses(prefix: str, count: int) -> dict:
    return batch(*(course(f"{prefix}-{i}", family=f"Family{letters(i)}") for i in range(count)))


def all_finished(*ids):
    return lambda: not Ingestion.objects.filter(id__in=ids, status__in=["queued", "processing"])


def written(ingestion_id) -> list[int]:
    """The numbers of the ingestion's receipt rows: the order its chunks were applied in."""
    rows = OutcomeChunk.objects.filter(ingestion_id=ingestion_id).order_by("id")
    return list(rows.values_list("id", flat=True))


@override_settings(REGISTRY_CHUNK_ENTRIES=10)
def test_a_single_sent_during_another_practices_batch_completes_before_the_batch(client, worker):
    backfill, births = api_for(client, "backfill"), api_for(client, "births")
    big = submitted(backfill, courses("B", 400))  # 40 chunks
    wait_for(lambda: len(written(big)) >= 2, message="the batch to be under way", interval=0.01)
    single = submitted(births, course("S-1", family="Single"))
    wait_for(all_finished(big, single), message="the batch and the single")

    (single_row,) = written(single)
    after = [row for row in written(big) if row > single_row]
    assert after, "the single waited for the whole batch"
    assert len(after) >= 30, f"the single waited for {40 - len(after)} of the 40 chunks"
    assert Ingestion.objects.get(id=big).accepted_count == 400


@override_settings(REGISTRY_CHUNK_ENTRIES=10)
def test_two_practices_batches_sent_together_take_alternate_turns(client, worker):
    from django.db import transaction

    first, second = api_for(client, "first"), api_for(client, "second")
    with transaction.atomic():  # published together, at the commit
        ids = [submitted(first, courses("F", 150)), submitted(second, courses("G", 150))]
    wait_for(all_finished(*ids), message="both batches")

    owner = {row: n for n, ingestion_id in enumerate(ids) for row in written(ingestion_id)}
    order = [owner[row] for row in sorted(owner)]
    assert len(order) == 30
    switches = sum(a != b for a, b in pairwise(order))
    assert switches >= 10, f"their chunks did not alternate: {order}"
    # Neither completed before the other had most of its chunks applied.
    assert order[:20].count(0) >= 5 and order[:20].count(1) >= 5, order


FAST_RECOVERY = {
    "REGISTRY_LEASE_SECONDS": "2",
    "REGISTRY_RECOVERY_INTERVAL_SECONDS": "0.5",
    "REGISTRY_RECOVERY_GRACE_SECONDS": "1",
    "REGISTRY_REQUEUE_AFTER_SECONDS": "2",
}


@override_settings(REGISTRY_CHUNK_ENTRIES=10)
def test_a_worker_killed_while_batches_and_singles_interleave_loses_and_repeats_nothing(
    client, tmp_path
):
    batches = [api_for(client, f"batch-{n}") for n in range(2)]
    singles = [api_for(client, f"single-{n}") for n in range(3)]
    with celery_worker(tmp_path, "doomed", **FAST_RECOVERY) as doomed:
        # Long enough (100 chunks each) that the singles' gathering window passes well before
        # either batch ends, however fast the machine.
        big = [submitted(api, courses(f"B{n}", 1000)) for n, api in enumerate(batches)]
        small = []
        for i in range(30):
            small.append(submitted(singles[i % 3], course(f"S-{i}", family=f"Single{letters(i)}")))
            if i == 15:
                wait_for(
                    lambda: all(len(written(b)) >= 2 for b in big),
                    message="both batches under way",
                    interval=0.01,
                )
        wait_for(
            lambda: (
                all(len(written(b)) >= 8 for b in big)
                and Ingestion.objects.filter(id__in=small, status="completed").exists()
            ),
            message="batches and singles interleaved",
            interval=0.01,
        )
        doomed.kill()
    unfinished = Ingestion.objects.filter(id__in=big, status="processing")
    assert unfinished.count() == 2, "killed too late to prove anything"

    with celery_worker(tmp_path, "survivor", beat=True, **FAST_RECOVERY):
        wait_for(all_finished(*big, *small), message="recovery to finish everything")

    assert set(Ingestion.objects.values_list("status", flat=True)) == {"completed"}
    for ingestion_id in big:
        ingestion = Ingestion.objects.get(id=ingestion_id)
        assert (ingestion.accepted_count, ingestion.rejected_count) == (1000, 0)
        seqs = OutcomeChunk.objects.filter(ingestion_id=ingestion_id).values_list("seq", flat=True)
        assert sorted(seqs) == list(range(100))  # each chunk's receipt once
    for ingestion_id in small:
        assert Ingestion.objects.get(id=ingestion_id).accepted_count == 1
        assert OutcomeChunk.objects.filter(ingestion_id=ingestion_id).count() == 1
    assert Record.objects.count() == 2030
    assert set(Record.objects.values_list("version", flat=True)) == {1}
    assert RecordVersion.objects.count() == 2030
    assert not StagedChunk.objects.exists()
    for api in [*batches, *singles]:
        assert counts_differences(practice_id=api.practice.id) == {}
