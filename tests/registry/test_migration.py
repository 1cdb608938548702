"""Migration 0004: pairwise links become match keys; flags, decisions and history are kept."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from registry.matching import digest
from registry.models import MatchKey, Record, RecordVersion, ReviewDecision
from registry.selectors import record_resemblance

BEFORE = [("registry", "0003_review_and_statistics")]
AFTER = [("registry", "0004_duplicate_matching")]
LIVE = Record.objects.only("id", "practice_id", "external_record_id")


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def old_apps(transactional_db):
    apps = migrate(BEFORE)
    yield apps
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_links_become_keys_and_every_flag_decision_and_version_is_kept(old_apps):
    practice = old_apps.get_model("registry", "Practice").objects.create(slug="st-mary")
    records = old_apps.get_model("registry", "Record").objects
    children = old_apps.get_model("registry", "Child").objects

    def record(chart: str, fp: str | None, orders: tuple[int, ...] = (1,), **fields):
        made = records.create(
            id=uuid.uuid4(), practice=practice, external_record_id=chart, fingerprint=fp, **fields
        )
        for order in orders:
            children.create(record=made, birth_order=order, outcome="live_birth")
        return made

    x, y = fingerprint("x"), fingerprint("y")
    original = record("C-1", x)
    flagged = record("C-2", x, suspected_duplicate=True)
    voided = record("C-3", x, voided=True)
    twins = record("C-4", y, orders=(1, 2))
    second_twin = record("C-5", y, orders=(2,), suspected_duplicate=True)
    record("C-6", None)
    old_apps.get_model("registry", "DuplicateLink").objects.create(
        record=flagged, resembles=original
    )
    old_apps.get_model("registry", "DuplicateLink").objects.create(
        record=second_twin, resembles=twins
    )
    user = old_apps.get_model("auth", "User").objects.create(username="rita")
    old_apps.get_model("registry", "ReviewDecision").objects.create(
        record=voided, action="void", decided_by=user, decided_by_username="rita", record_version=1
    )
    old_apps.get_model("registry", "RecordVersion").objects.create(
        record=flagged, version=1, change="created", values={"voided": False}
    )

    migrate(AFTER)

    # The records are read column by column (LIVE): later migrations add columns to the model
    # that do not exist yet at this one.
    chart_of = dict(LIVE.values_list("id", "external_record_id"))
    keys = {(chart_of[k.record_id], k.time, k.birth_order) for k in MatchKey.objects.all()}
    assert keys == {
        ("C-1", None, None),  # a lone child's order 1 may have been a guess: it matches any
        ("C-2", None, None),
        ("C-4", None, 1),
        ("C-4", None, 2),
        ("C-5", None, 2),
    }
    assert set(MatchKey.objects.values_list("fingerprint", flat=True)) == {digest(x), digest(y)}
    assert list(
        Record.objects.filter(suspected_duplicate=True)
        .order_by("external_record_id")
        .values_list("external_record_id", flat=True)
    ) == ["C-2", "C-5"]
    # every old link is still a resemblance, in both directions
    c1, c2, c4, c5 = (LIVE.get(external_record_id=c) for c in ("C-1", "C-2", "C-4", "C-5"))
    assert record_resemblance(record=c2).record_ids == [c1.pk]
    assert record_resemblance(record=c1).record_ids == [c2.pk]
    assert record_resemblance(record=c5).record_ids == [c4.pk]
    assert (
        ReviewDecision.objects.values_list("record__external_record_id", flat=True).get() == "C-3"
    )
    assert RecordVersion.objects.get().record_id == c2.pk
    assert "registry_duplicatelink" not in connection.introspection.table_names()
