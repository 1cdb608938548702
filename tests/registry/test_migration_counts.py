"""Migration 0005 fills the attendants' roles and the counts for records already on file."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from registry.statistics.counts import counts_differences, counts_stored

COUNTS = ("registry", "0006_birth_counts")


@pytest.mark.django_db(transaction=True)
def test_migration_0005_counts_the_records_on_file():
    executor = MigrationExecutor(connection)
    before = sorted(executor.loader.graph.node_map[COUNTS].parents)
    targets = [(parent.key[0], parent.key[1]) for parent in before]
    executor.migrate(targets)
    apps = executor.loader.project_state(targets).apps
    practice = apps.get_model("registry", "Practice").objects.create(slug="old", name="Old")
    provider = apps.get_model("registry", "Provider").objects.create(
        practice=practice, stable_id="P", role="nurse"
    )
    Record = apps.get_model("registry", "Record")
    for number, (year, voided) in enumerate([(2023, False), (None, False), (2023, True)]):
        record = Record.objects.create(
            id=uuid.uuid4(),
            practice=practice,
            external_record_id=f"C-{number}",
            birth_year=year,
            voided=voided,
            consent_granted=True,
        )
        apps.get_model("registry", "Child").objects.create(
            record=record, birth_order=1, outcome="live_birth", birth_weight_grams=2100
        )
        apps.get_model("registry", "Attendance").objects.create(
            record=record, provider=provider, kind="attended"
        )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from registry.models import Attendance

    assert set(Attendance.objects.values_list("role", flat=True)) == {"nurse"}
    stored = counts_stored()
    assert stored[(practice.pk, 2023, "nurse")][:3] == (1, 0, 1)  # births, flagged, consent
    assert stored[(practice.pk, 0, "all")][0] == 1  # the unknown year
    assert counts_differences() == {}
