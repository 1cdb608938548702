"""Review decisions: keep, void and merge, each recorded, each under the practice lock."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.db import OperationalError, connection, connections, transaction

from registry.locks import PRACTICE_LOCK_NAMESPACE
from registry.models import Record, RecordVersion, ReviewDecision
from registry.review.services import ReviewError, record_keep, record_merge, record_void
from registry.selectors import record_resemblance
from registry.statistics.selectors import stats_for_practice
from tests.registry.factories import birth, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(st_mary):
    """An original and a later record flagged as resembling it, as the pipeline leaves them."""
    original = birth(st_mary, external_record_id="C-1", fingerprint="f" * 64)
    flagged = birth(
        st_mary, external_record_id="C-2", fingerprint="f" * 64, suspected_duplicate=True
    )
    return original, flagged


def fresh(record: Record) -> Record:
    return Record.objects.get(pk=record.pk)


# -- keep ---------------------------------------------------------------------------------------


def test_keep_clears_the_flag_and_records_who_and_when(pair, reviewer):
    original, flagged = pair
    decision = record_keep(record=flagged, by=reviewer, note="  twins' cousins  ")
    kept = fresh(flagged)
    assert not kept.suspected_duplicate and not kept.voided and kept.merged_into is None
    assert kept.version == 1  # a review is not an amendment
    assert (decision.action, decision.decided_by, decision.decided_by_username) == (
        "keep",
        reviewer,
        "rita",
    )
    assert decision.note == "twins' cousins"
    assert decision.survivor is None and decision.record_version == 1
    version = RecordVersion.objects.get(record=flagged)
    assert version.change == RecordVersion.Change.REVIEWED
    assert version.values == {
        "voided": False,
        "suspected_duplicate": False,
        "merged_into": None,
        "review": "keep",
    }
    # what it resembled stays on file, and still resembles it
    assert record_resemblance(record=kept).record_ids == [original.pk]
    assert stats_for_practice(practice=flagged.practice)["suspected_duplicates"] == 0


def test_keep_refuses_a_record_that_is_not_flagged(pair, reviewer):
    original, _ = pair
    with pytest.raises(ReviewError, match="not flagged"):
        record_keep(record=original, by=reviewer)
    assert not ReviewDecision.objects.exists()


def test_keep_refuses_a_voided_record(pair, reviewer):
    _, flagged = pair
    Record.objects.filter(pk=flagged.pk).update(voided=True)
    with pytest.raises(ReviewError, match="voided"):
        record_keep(record=flagged, by=reviewer)


# -- void ---------------------------------------------------------------------------------------


def test_void_voids_clears_the_flag_and_drops_out_of_statistics(pair, reviewer):
    _, flagged = pair
    assert stats_for_practice(practice=flagged.practice)["births"] == 2
    decision = record_void(record=flagged, by=reviewer, note="test record")
    voided = fresh(flagged)
    assert voided.voided and voided.voided_at is not None
    assert not voided.suspected_duplicate and voided.merged_into is None
    assert (decision.action, decision.survivor) == ("void", None)
    assert RecordVersion.objects.get(record=flagged).change == RecordVersion.Change.VOIDED
    figures = stats_for_practice(practice=flagged.practice)
    assert (figures["births"], figures["suspected_duplicates"]) == (1, 0)


def test_void_refuses_a_record_already_voided(pair, reviewer):
    _, flagged = pair
    record_void(record=flagged, by=reviewer)
    with pytest.raises(ReviewError, match="already voided"):
        record_void(record=flagged, by=reviewer)
    assert ReviewDecision.objects.count() == 1


# -- merge --------------------------------------------------------------------------------------


def test_merge_voids_the_record_points_it_at_the_survivor_and_copies_nothing(pair, reviewer):
    original, flagged = pair
    before = {f.name: getattr(original, f.name) for f in Record._meta.concrete_fields}
    children_before = list(original.children.values())
    decision = record_merge(record=flagged, survivor=original, by=reviewer, note="same birth")
    merged = fresh(flagged)
    assert merged.voided and not merged.suspected_duplicate
    assert merged.merged_into == original
    survivor = fresh(original)
    assert {f.name: getattr(survivor, f.name) for f in Record._meta.concrete_fields} == before
    assert list(survivor.children.values()) == children_before
    assert merged.children.count() == 1  # its own facts stay with it, voided
    assert (decision.action, decision.survivor, decision.note) == ("merge", original, "same birth")
    version = RecordVersion.objects.get(record=flagged)
    assert version.change == RecordVersion.Change.VOIDED
    assert version.values["merged_into"] == str(original.pk)
    assert not RecordVersion.objects.filter(record=original).exists()
    assert stats_for_practice(practice=original.practice)["births"] == 1


def test_merge_refuses_the_record_itself(pair, reviewer):
    _, flagged = pair
    with pytest.raises(ReviewError, match="itself"):
        record_merge(record=flagged, survivor=flagged, by=reviewer)


def test_merge_refuses_a_survivor_of_another_practice(pair, reviewer, riverside):
    _, flagged = pair
    foreign = birth(riverside)
    with pytest.raises(ReviewError, match="same practice"):
        record_merge(record=flagged, survivor=foreign, by=reviewer)
    assert not fresh(flagged).voided


def test_merge_refuses_a_voided_survivor(pair, reviewer):
    original, flagged = pair
    stale_survivor = fresh(original)
    record_void(record=original, by=reviewer)
    with pytest.raises(ReviewError, match="cannot be the survivor"):
        record_merge(record=flagged, survivor=stale_survivor, by=reviewer)
    assert not fresh(flagged).voided


def test_merge_refuses_a_record_already_voided(pair, reviewer):
    original, flagged = pair
    record_void(record=flagged, by=reviewer)
    with pytest.raises(ReviewError, match="already voided"):
        record_merge(record=flagged, survivor=original, by=reviewer)


# -- who may decide ------------------------------------------------------------------------------


@pytest.mark.parametrize("decide", ["keep", "void", "merge"])
def test_only_a_reviewer_of_the_practice_or_a_superuser_decides(pair, staff, decide, riverside):
    original, flagged = pair
    other_reviewer = member(riverside, "rory", "reviewer", is_staff=True)
    for outsider in (staff, other_reviewer):
        with pytest.raises(PermissionDenied):
            _decide(decide, flagged, original, outsider)
    assert not ReviewDecision.objects.exists()
    assert fresh(flagged).suspected_duplicate


@pytest.mark.parametrize("decide", ["keep", "void", "merge"])
def test_a_superuser_decides_for_any_practice(pair, superuser, decide):
    original, flagged = pair
    decision = _decide(decide, flagged, original, superuser)
    assert decision.decided_by == superuser


def _decide(decide, flagged, original, by):
    if decide == "keep":
        return record_keep(record=flagged, by=by)
    if decide == "void":
        return record_void(record=flagged, by=by)
    return record_merge(record=flagged, survivor=original, by=by)


# -- the practice lock ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("decide", ["keep", "void", "merge"])
def test_a_decision_waits_for_the_practice_lock_the_pipeline_holds(decide, st_mary, reviewer):
    """While another transaction holds the practice lock (as an ingestion does), a decision
    cannot proceed: here it gives up after a short lock_timeout instead of waiting."""
    original = birth(st_mary, fingerprint="f" * 64)
    flagged = birth(st_mary, fingerprint="f" * 64, suspected_duplicate=True)
    holder = connections.create_connection("default")  # a second session, as a worker's
    try:
        with holder.cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)", [PRACTICE_LOCK_NAMESPACE, st_mary.pk]
            )
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '200ms'")
            with pytest.raises(OperationalError, match="lock timeout"):
                _decide(decide, flagged, original, reviewer)
    finally:
        holder.close()
    assert fresh(flagged).suspected_duplicate and not fresh(flagged).voided
    assert not ReviewDecision.objects.exists()
    _decide(decide, flagged, original, reviewer)  # the lock released, the decision goes ahead


def test_a_decision_rereads_the_record_so_a_stale_copy_cannot_undo_the_pipeline(pair, reviewer):
    """The reviewer's page was loaded before an ingestion retracted the record."""
    original, flagged = pair
    page_copy = fresh(flagged)
    Record.objects.filter(pk=flagged.pk).update(voided=True)  # the pipeline's retraction
    with pytest.raises(ReviewError, match="voided"):
        record_merge(record=page_copy, survivor=original, by=reviewer)
    with pytest.raises(ReviewError, match="voided"):
        record_keep(record=page_copy, by=reviewer)
    assert fresh(flagged).suspected_duplicate  # nothing was written over it
