"""seed_registry: realistic masked records, consistent with what matching and review expect."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from registry import seeding
from registry.matching import keys_resemble, stored_keys
from registry.models import MatchKey, Practice, Record

pytestmark = pytest.mark.django_db


def test_seeding_loads_the_planned_shape_and_calls_the_hook(monkeypatch):
    finished = []
    monkeypatch.setattr(seeding, "CLUSTER_RECORDS", 50)
    monkeypatch.setattr(
        seeding, "seeding_finished", lambda *, practices: finished.append(len(practices))
    )
    seeded = seeding.seed_registry(records=2000, practices=6, seed=3)
    assert Record.objects.count() == seeded.records == 2000
    assert finished == [6]
    big = Practice.objects.get(slug="seed-0")
    assert Record.objects.filter(practice=big).count() == 400  # a fifth
    assert Record.objects.filter(practice__slug="seed-1").count() == 40
    # the cluster: one fingerprint, every record after the first flagged
    cluster = Record.objects.filter(practice=big).order_by("external_record_id")[:50]
    assert len({r.fingerprint for r in cluster}) == 1
    assert [r.suspected_duplicate for r in cluster] == [False] + [True] * 49
    # live records have keys, voided ones none; every flag is supported by the rule
    live = Record.objects.filter(voided=False)
    assert set(MatchKey.objects.values_list("record_id", flat=True)) == set(
        live.values_list("id", flat=True)
    )
    assert Record.objects.filter(voided=True).exists()
    flagged = list(Record.objects.filter(suspected_duplicate=True).exclude(practice=big)[:20])
    assert flagged
    keys = stored_keys(
        Record.objects.filter(practice__in={r.practice_id for r in flagged}).values_list(
            "id", flat=True
        )
    )
    for record in flagged:
        assert any(
            keys_resemble(keys[record.pk], theirs)
            for other, theirs in keys.items()
            if other != record.pk
        )


def test_seeding_twice_is_refused():
    call_command("seed_registry", "--records", "200", "--practices", "3")
    with pytest.raises(CommandError, match="already seeded"):
        call_command("seed_registry", "--records", "200", "--practices", "3")
