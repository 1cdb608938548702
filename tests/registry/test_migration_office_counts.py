"""Migration 0012 fills the registry office's counts for what is already on file: the records
by the day they were received, and the finished ingestions by the day they were sent."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from registry.statistics.counts import RECEIVED, counts_differences, counts_stored
from registry.statistics.submissions import submissions_differences, submissions_stored

BEFORE = [("registry", "0011_office_counts")]
MONDAY = datetime(2026, 3, 2, 23, 30, tzinfo=UTC)  # late in the UTC day
TUESDAY = datetime(2026, 3, 3, 0, 15, tzinfo=UTC)


@pytest.mark.django_db(transaction=True)
def test_migration_0012_counts_the_records_and_ingestions_on_file():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    ingestion = [node for node in executor.loader.graph.leaf_nodes() if node[0] == "ingestion"]
    apps = executor.loader.project_state([*BEFORE, *ingestion]).apps
    practice = apps.get_model("registry", "Practice").objects.create(slug="old", name="Old")
    Record = apps.get_model("registry", "Record")
    for number, (received, voided) in enumerate(
        [(MONDAY, False), (TUESDAY, False), (MONDAY, True)]
    ):
        record = Record.objects.create(
            id=uuid.uuid4(),
            practice=practice,
            external_record_id=f"C-{number}",
            birth_year=2026,
            voided=voided,
            created_at=received,
        )
        apps.get_model("registry", "Child").objects.create(
            record=record, birth_order=1, outcome="live_birth", birth_weight_grams=2100
        )
    Ingestion = apps.get_model("ingestion", "Ingestion")
    for status, queued_at, counts in [
        ("completed", MONDAY, (3, 2, 1)),
        ("failed", TUESDAY, (4, 1, 0)),  # its 3 courses not accepted count as rejected
        ("completed", TUESDAY, (1, 1, 0)),
        ("processing", MONDAY, (5, 0, 0)),  # not finished: not counted yet
    ]:
        Ingestion.objects.create(
            id=uuid.uuid4(),
            practice=practice,
            kind="batch",
            status=status,
            queued_at=queued_at,
            entry_count=counts[0],
            accepted_count=counts[1],
            rejected_count=counts[2],
        )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    stored = counts_stored()
    monday, tuesday = MONDAY.date(), TUESDAY.date()
    assert stored[(practice.pk, monday, RECEIVED)][0] == 1  # births: the voided one is out
    assert stored[(practice.pk, tuesday, RECEIVED)][0] == 1
    # (The birth-year cells are 0006's: these records were made without them.)
    assert not [key for key in counts_differences() if key[2] == RECEIVED]
    assert submissions_stored() == {
        (practice.pk, monday): (1, 3, 2, 1, MONDAY),
        (practice.pk, tuesday): (2, 5, 2, 3, TUESDAY),
    }
    assert submissions_differences() == {}
