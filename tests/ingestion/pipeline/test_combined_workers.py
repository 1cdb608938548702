"""Waiting singles applied together, with real Celery workers on PostgreSQL and Redis.

* A worker killed in the middle of a combined claim: nothing of the chunk was applied, each
  single is claimed again alone once its lease runs out, the one that kills the worker is
  isolated and rejected, the others are applied exactly once.
* Two workers taking one practice's singles as they arrive: each applied exactly once, each
  with its own receipt, the records those of a serial order.
* One practice's singles interleaved with another practice's batches, two workers.
* Singles held by the gathering window (``REGISTRY_SINGLES_GATHER_SECONDS``): one claim.
* A backlog of 2,000 singles drains while the recovery runs: at most 1% published again.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from registry.models import Record, RecordVersion
from registry.statistics.counts import counts_differences
from tests.factories import batch, course, letters
from tests.ingestion.conftest import Api, ingestion_id_of, mint
from tests.ingestion.messaging.test_republish import empty_queue  # noqa: F401 (a fixture)
from tests.workers import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

FAST_RECOVERY = {
    "REGISTRY_LEASE_SECONDS": "1",
    "REGISTRY_RECOVERY_INTERVAL_SECONDS": "0.5",
    "REGISTRY_RECOVERY_GRACE_SECONDS": "1",
    "REGISTRY_REQUEUE_AFTER_SECONDS": "1",
}


def api_for(client, slug: str) -> Api:
    from registry.models import Practice

    practice = Practice.objects.create(slug=slug)
    return Api(client, mint(practice), practice)


def all_finished(ids):
    def check():
        return not Ingestion.objects.filter(id__in=ids, status__in=["queued", "processing"])

    return check


def receipt_entries(ingestion_id) -> list[dict]:
    rows = OutcomeChunk.objects.filter(ingestion_id=ingestion_id).order_by("seq", "part")
    return [entry for row in rows for entry in [*row.accepted, *row.rejected]]


def test_a_worker_killed_in_the_middle_of_a_combined_claim_loses_only_the_crashing_course(
    client, tmp_path
):
    api = api_for(client, "st-mary")
    charts = [f"K-{i}" for i in range(20)]
    charts[10] = "CRASH-ME"
    ids = [
        uuid.UUID(ingestion_id_of(api.submit(course(chart, family=f"Family{letters(i)}"))))
        for i, chart in enumerate(charts)
    ]
    crashes = 0
    for round_ in range(15):
        with celery_worker(
            tmp_path, f"crash-{round_}", beat=True, app="tests.crashing_worker", **FAST_RECOVERY
        ) as worker:

            def finished_or_dead():
                return all_finished(ids)() or worker.process.poll() is not None

            wait_for(finished_or_dead, message="a crash or the end")
            crashes += worker.process.poll() is not None
        if all_finished(ids)():
            break
    assert crashes >= 2
    ingestions = {i.id: i for i in Ingestion.objects.filter(id__in=ids)}
    # The first claim took all twenty together, and died: each was claimed again after it.
    assert all(i.attempts >= 2 for i in ingestions.values())
    assert {i.status for i in ingestions.values()} == {Ingestion.Status.COMPLETED}
    for chart, ingestion_id in zip(charts, ids, strict=True):
        (entry,) = receipt_entries(ingestion_id)
        if chart == "CRASH-ME":
            assert entry["operation_outcome"]["issue"][0]["code"] == "exception"
            assert ingestions[ingestion_id].rejected_count == 1
        else:
            assert entry["external_record_id"] == chart
            assert ingestions[ingestion_id].accepted_count == 1
    assert Record.objects.count() == 19
    assert RecordVersion.objects.count() == 19
    assert not StagedChunk.objects.exists()


def submit_in_threads(api_by_thread, bodies_by_thread) -> list[str]:
    """Each thread submits its bodies in order, with its own connection, all at once."""
    from django.test import Client

    ids: list[str] = []
    lock = threading.Lock()

    def run(api, bodies):
        try:
            own = Api(Client(), api.token, api.practice)
            for body in bodies:
                response = own.submit(body)
                assert response.status_code == 202, response.content
                with lock:
                    ids.append(ingestion_id_of(response))
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=pair)
        for pair in zip(api_by_thread, bodies_by_thread, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return ids


def test_two_workers_apply_one_practices_singles_each_exactly_once(client, tmp_path, settings):
    settings.REGISTRY_RATE_LIMIT = "1000/m"  # 200 submissions with one key within a minute
    api = api_for(client, "st-mary")
    # 40 charts, each sent five times with a later timestamp, by four senders at once.
    bodies = [
        [
            course(
                f"C-{chart}",
                family=f"Family{letters(chart)}",
                last_updated=f"2024-03-1{sender}T10:0{n}:00Z",
            )
            for chart in range(sender, 40, 4)
            for n in range(5)
        ]
        for sender in range(4)
    ]
    with celery_worker(tmp_path, "one") as one, celery_worker(tmp_path, "two") as two:
        ids = submit_in_threads([api] * 4, bodies)
        wait_for(all_finished(ids), message="every single")
        logs = one.output(), two.output()
    assert all("process_ingestion" in log for log in logs), "both workers took a share"
    assert len(ids) == 200
    assert set(Ingestion.objects.values_list("status", flat=True)) == {"completed"}
    accepted: Counter[str] = Counter()
    for ingestion_id in ids:
        (entry,) = receipt_entries(ingestion_id)  # exactly one entry, in its own receipt
        if "submission_uuid" in entry:
            accepted[entry["external_record_id"]] += 1
    assert Record.objects.count() == 40
    for record in Record.objects.all():
        # Every accepted one became a version, once: a later one applied first makes the
        # earlier ones stale updates (rejected), as in any serial order.
        assert record.version == accepted[record.external_record_id]
        assert record.versions.count() == record.version
    assert counts_differences(practice_id=api.practice.id) == {}
    assert not StagedChunk.objects.exists()


@pytest.mark.usefixtures("empty_queue")
def test_singles_held_by_the_gathering_window_are_claimed_together(client, tmp_path, settings):
    """REGISTRY_SINGLES_GATHER_SECONDS: the first single's message is held that long, and
    the practice's singles submitted meanwhile (one every 0.1 s) come along in its claim.
    (At once, the worker would have claimed the first before the second was sent.)"""
    settings.REGISTRY_SINGLES_GATHER_SECONDS = 2.0
    api = api_for(client, "st-mary")
    with celery_worker(tmp_path, "held"):
        started = timezone.now()
        ids = []
        for i in range(8):
            response = api.submit(course(f"G-{i}", family=f"Family{letters(i)}"))
            ids.append(uuid.UUID(ingestion_id_of(response)))
            time.sleep(0.1)
        wait_for(all_finished(ids), message="the held singles")
    held = Ingestion.objects.filter(id__in=ids)
    assert set(held.values_list("status", flat=True)) == {"completed"}
    (completed_at,) = set(held.values_list("completed_at", flat=True))  # one claim
    assert completed_at - started >= timedelta(seconds=2)
    assert Record.objects.filter(practice=api.practice).count() == 8
    for ingestion_id in ids:
        (entry,) = receipt_entries(ingestion_id)
        assert "submission_uuid" in entry


def test_one_practices_singles_beside_another_practices_batches(client, tmp_path):
    singles_api, batches_api = api_for(client, "st-mary"), api_for(client, "riverside")
    singles = [
        [course(f"S-{s}-{i}", family=f"Single{letters(i)}") for i in range(40)] for s in (0, 1)
    ]
    batches = [
        [
            batch(*(course(f"B-{b}-{i}", family=f"Batch{letters(i)}") for i in range(50)))
            for b in range(start, start + 3)
        ]
        for start in (0, 3)
    ]
    with celery_worker(tmp_path, "one"), celery_worker(tmp_path, "two"):
        ids = submit_in_threads(
            [singles_api, singles_api, batches_api, batches_api], [*singles, *batches]
        )
        wait_for(all_finished(ids), message="singles and batches")
    assert set(Ingestion.objects.values_list("status", flat=True)) == {"completed"}
    kinds = Counter(Ingestion.objects.values_list("kind", flat=True))
    assert kinds == {"single": 80, "batch": 6}
    assert Record.objects.filter(practice=singles_api.practice).count() == 80
    assert Record.objects.filter(practice=batches_api.practice).count() == 300
    for ingestion in Ingestion.objects.all():
        courses = 1 if ingestion.kind == Ingestion.Kind.SINGLE else ingestion.entry_count
        assert len(receipt_entries(ingestion.id)) == courses == ingestion.accepted_count
    for api in (singles_api, batches_api):
        assert counts_differences(practice_id=api.practice.id) == {}


@pytest.mark.usefixtures("empty_queue")
def test_a_backlog_of_2000_singles_drains_with_at_most_one_percent_published_again(tmp_path):
    """The beat's recovery, run every 0.2 s while a worker drains 2,000 singles that have
    all waited past REGISTRY_REQUEUE_AFTER_SECONDS: their messages are still in the queue."""
    from ingestion.intake.services import ingestion_submit
    from ingestion.intake.submission import parse_submission
    from ingestion.tasks import recover_ingestions
    from registry.models import Practice
    from tests.factories import dumps

    practices = [Practice.objects.create(slug=f"clinic-{p}") for p in range(100)]
    ids = []
    for n in range(2000):
        body = dumps(course(f"Q-{n}", family=f"Family{letters(n)}"))
        submission = parse_submission(body, chunk_entries=250, chunk_bytes=1 << 22)
        ingestion, _ = ingestion_submit(
            practice=practices[n % 100], submission=submission, idempotency_key=None
        )
        ids.append(ingestion.id)
    start = timezone.now() - timedelta(seconds=90)
    for n, ingestion_id in enumerate(ids):  # all waiting for more than a minute, in order
        Ingestion.objects.filter(id=ingestion_id).update(
            enqueued_at=start + timedelta(milliseconds=10 * n)
        )
    republished, runs = recover_ingestions(), 1  # the beat fires before any worker is free
    with celery_worker(tmp_path, "draining") as worker:
        while not all_finished(ids)():
            republished += recover_ingestions()
            runs += 1
            time.sleep(0.2)
        log = worker.output()
    assert republished <= 20, f"{republished} of 2,000 published again"
    assert runs >= 2, "the recovery ran while the backlog drained"
    assert "process_ingestion" in log
    assert Record.objects.count() == 2000
    assert OutcomeChunk.objects.filter(ingestion_id__in=ids).count() == 2000
