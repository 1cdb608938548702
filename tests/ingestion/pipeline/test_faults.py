"""Transient database errors roll a chunk back and retry it; only a record's values reject it.

The worker test cancels the real worker's statements with ``pg_cancel_backend`` while it
applies a batch, as an operator or a statement timeout would.
"""

from __future__ import annotations

import random
import threading
import time
import uuid

import psycopg
import pytest
from django.conf import settings
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
def test_a_statement_sent_after_a_cancelled_one_is_classed_by_the_cancellation():
    """In an aborted transaction every further statement fails with 25P02; the error that
    matters is the one before it (a cleanup in a ``finally`` once hid a cancellation)."""

    def cancelled_then_cleaned_up() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL statement_timeout = 10")
            try:
                cursor.execute("SELECT pg_sleep(1)")
            finally:
                cursor.execute("SELECT 1")  # fails: the transaction is aborted

    with pytest.raises(DatabaseError) as raised:
        cancelled_then_cleaned_up()
    assert sqlstate(raised.value) == "57014"
    assert is_transient(raised.value)


@pytest.mark.django_db(transaction=True)
def test_a_deadlock_is_transient():
    deadlock = database_error(
        "DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = 'deadlock_detected'; END $$"
    )
    assert is_transient(deadlock)
    assert not is_record_fault(deadlock)


class Canceller(threading.Thread):
    """Cancels the worker's running statements in bursts: every 3 ms for 50 ms, then a pause.

    Cancelling every 3 ms without a pause starves a loaded machine: when each chunk's
    statements take longer than that, every try is cancelled and no chunk ever commits. The
    random pauses let some tries through however slow the machine is, while the bursts still
    cancel statements at every point of a chunk.
    """

    BURST_SECONDS = 0.05

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.cancelled = 0
        self.pauses = random.Random(20)

    def run(self) -> None:
        with psycopg.connect(workers.test_database_url(), autocommit=True) as conn:
            while not self.stop.wait(self.pauses.uniform(0.02, 0.3)):
                burst_end = time.monotonic() + self.BURST_SECONDS
                while time.monotonic() < burst_end and not self.stop.wait(0.003):
                    self.cancelled += self._cancel(conn)

    def _cancel(self, conn: psycopg.Connection) -> int:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = %s AND state = 'active'",
            [WORKER_APP_NAME],
        ).fetchone()
        return row[0] if row else 0


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
                # A loaded machine makes each chunk slower, so more of its tries are cancelled:
                # progress is slower, never lost. The wait is a deadline, not a measurement.
                timeout=600,
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


def finished_or_dead(ingestion_id, worker):
    def check():
        ingestion = Ingestion.objects.get(id=ingestion_id)
        return ingestion.finished or worker.process.poll() is not None

    return check


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
@override_settings(REGISTRY_CHUNK_ENTRIES=10)
def test_a_chunk_that_keeps_killing_the_worker_loses_only_the_crashing_entry(client, tmp_path):
    """Each claim makes progress and then dies; the crashing entry is isolated and rejected."""
    from registry.models import Practice

    api = Api(client, mint(Practice.objects.create(slug="st-mary")), None)  # type: ignore[arg-type]
    charts = [f"C-{i}" for i in range(60)]
    charts[25] = "CRASH-ME"
    courses = [course(chart, family=f"Family{letters(i)}") for i, chart in enumerate(charts)]
    fast_recovery = {
        "REGISTRY_LEASE_SECONDS": "1",
        "REGISTRY_RECOVERY_INTERVAL_SECONDS": "0.5",
        "REGISTRY_RECOVERY_GRACE_SECONDS": "1",
    }
    ingestion_id = uuid.UUID(ingestion_id_of(api.submit(batch(*courses))))
    crashes = 0
    for round_ in range(12):
        with celery_worker(
            tmp_path, f"crashing-{round_}", beat=True, app="tests.crashing_worker", **fast_recovery
        ) as worker:
            wait_for(finished_or_dead(ingestion_id, worker), message="a crash or the end")
            crashes += worker.process.poll() is not None
        if Ingestion.objects.get(id=ingestion_id).finished:
            break
    ingestion = Ingestion.objects.get(id=ingestion_id)
    assert crashes >= 3
    assert ingestion.status == Ingestion.Status.COMPLETED
    assert (ingestion.accepted_count, ingestion.rejected_count) == (59, 1)
    assert Record.objects.count() == 59
    assert not Record.objects.filter(external_record_id="CRASH-ME").exists()
    receipt = api.receipt(str(ingestion_id)).json()["outcome"]
    accepted = [entry["reference"] for entry in receipt["accepted"]]
    assert accepted == [f"Bundle.entry[{i}]" for i in range(60) if i != 25]
    (rejected,) = receipt["rejected"]
    assert rejected["reference"] == "Bundle.entry[25]"
    assert rejected["operation_outcome"]["issue"][0]["code"] == "exception"


CANCEL_FIRST_INSERTS = """
CREATE SEQUENCE injected_faults;
CREATE FUNCTION cancel_first_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A sequence, not a table: its count survives the rollback the error causes.
    IF nextval('injected_faults') <= %(faults)s THEN
        RAISE EXCEPTION 'injected cancellation' USING ERRCODE = 'query_canceled';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER cancel_first_inserts BEFORE INSERT ON registry_record
    FOR EACH ROW EXECUTE FUNCTION cancel_first_inserts();
"""
REMOVE_INJECTION = """
DROP TRIGGER IF EXISTS cancel_first_inserts ON registry_record;
DROP FUNCTION IF EXISTS cancel_first_inserts();
DROP SEQUENCE IF EXISTS injected_faults;
"""


@pytest.mark.django_db(transaction=True)
@override_settings(REGISTRY_TRANSIENT_RETRIES=2)
def test_cancelled_tries_of_an_isolated_entry_are_not_crashes(client):
    """An entry being tried alone whose tries keep being cancelled is tried again, never
    rejected as crashing: only a try that ends the process counts towards the crash limit."""
    from ingestion.pipeline.process import ingestion_process
    from ingestion.pipeline.recovery import ingestion_release
    from registry.models import Practice

    practice = Practice.objects.create(slug="st-mary")
    api = Api(client, mint(practice), practice)
    ingestion_id = uuid.UUID(ingestion_id_of(api.submit(course("C-1", family="Cancelled"))))
    # Two claims applied nothing already: this one applies the chunk an entry at a time.
    Ingestion.objects.filter(id=ingestion_id).update(fruitless_claims=2)
    faults = 3 * 2 * (settings.REGISTRY_ENTRY_CRASH_LIMIT + 1)  # more tries than the limit
    with connection.cursor() as cursor:
        cursor.execute(CANCEL_FIRST_INSERTS % {"faults": faults})
    errors: list[DatabaseError] = []
    try:
        for _ in range(faults):
            Ingestion.objects.filter(id=ingestion_id).update(fruitless_claims=2)
            try:
                ingestion_process(ingestion_id)
            except DatabaseError as error:
                errors.append(error)
                ingestion_release(ingestion_id)
            if Ingestion.objects.get(id=ingestion_id).finished:
                break
    finally:
        with connection.cursor() as cursor:
            cursor.execute(REMOVE_INJECTION)
    assert errors and all(is_transient(error) for error in errors)  # the attempts failed
    ingestion = Ingestion.objects.get(id=ingestion_id)
    assert ingestion.status == Ingestion.Status.COMPLETED
    assert (ingestion.accepted_count, ingestion.rejected_count) == (1, 0)
