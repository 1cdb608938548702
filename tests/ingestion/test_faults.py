"""Transient database errors roll a chunk back and retry it; only a record's values reject it.

The worker test cancels the real worker's statements with ``pg_cancel_backend`` while it
applies a batch, as an operator or a statement timeout would.
"""

from __future__ import annotations

import threading
import uuid

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction
from django.test import override_settings

from ingestion.faults import is_record_fault, is_transient, sqlstate
from ingestion.models import Ingestion
from registry.models import Record
from tests import workers
from tests.factories import batch, course, letters
from tests.ingestion.conftest import Api, ingestion_id_of, mint
from tests.workers import celery_worker, wait_for

WORKER_APP_NAME = "registry-i12-cancel-me"


def database_error(statement: str) -> DatabaseError:
    with (
        pytest.raises(DatabaseError) as caught,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    return caught.value


@pytest.mark.django_db(transaction=True)
def test_values_the_database_refuses_are_the_records_fault():
    too_big = database_error("SELECT 99999999999::int")
    assert sqlstate(too_big) == "22003"
    assert is_record_fault(too_big)
    assert not is_transient(too_big)


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_statement_is_transient_not_the_records_fault():
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = 10")
    try:
        cancelled = database_error("SELECT pg_sleep(1)")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout")
    assert sqlstate(cancelled) == "57014"
    assert is_transient(cancelled)
    assert not is_record_fault(cancelled)


@pytest.mark.django_db(transaction=True)
def test_a_deadlock_is_transient():
    deadlock = database_error(
        "DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = 'deadlock_detected'; END $$"
    )
    assert is_transient(deadlock)
    assert not is_record_fault(deadlock)


class Canceller(threading.Thread):
    """Cancels the worker's running statements, one every few milliseconds."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.cancelled = 0

    def run(self) -> None:
        with psycopg.connect(workers.test_database_url(), autocommit=True) as conn:
            while not self.stop.wait(0.003):
                row = conn.execute(
                    "SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) FROM pg_stat_activity"
                    " WHERE application_name = %s AND state = 'active'",
                    [WORKER_APP_NAME],
                ).fetchone()
                self.cancelled += row[0] if row else 0


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@override_settings(REGISTRY_CHUNK_ENTRIES=20)
def test_cancelled_statements_never_reject_a_valid_record(client, tmp_path):
    from registry.models import Practice

    api = Api(client, mint(Practice.objects.create(slug="st-mary")), None)  # type: ignore[arg-type]
    courses = [course(f"C-{i}", family=f"Family{letters(i)}") for i in range(1500)]
    canceller = Canceller()
    with celery_worker(tmp_path, "cancelled", PGAPPNAME=WORKER_APP_NAME) as worker:
        canceller.start()
        try:
            ingestion_id = uuid.UUID(ingestion_id_of(api.submit(batch(*courses))))
            ingestion = wait_for(
                lambda: Ingestion.objects.filter(
                    id=ingestion_id, status__in=["completed", "failed"]
                ).first(),
                message="the batch to finish",
            )
        finally:
            canceller.stop.set()
            canceller.join()
        log = worker.output()
    print("statements cancelled:", canceller.cancelled)
    assert canceller.cancelled > 0
    assert "rolled back (QueryCanceled" in log or "rolled back (OperationalError" in log
    assert ingestion.status == Ingestion.Status.COMPLETED
    assert (ingestion.accepted_count, ingestion.rejected_count) == (1500, 0)
    assert Record.objects.count() == 1500
