"""``manage.py check_registry [--fix]``: healthy, and broken in each way it checks."""

from __future__ import annotations

import io
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import F
from django.utils import timezone

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from ingestion.pipeline.process import ingestion_process
from registry.models import BirthCount, MatchKey, Record, SubmissionCount
from tests.factories import batch, course
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db


def check(*arguments: str) -> tuple[bool, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("check_registry", *arguments, stdout=out, stderr=err)
    except CommandError:
        return False, out.getvalue(), err.getvalue()
    return True, out.getvalue(), err.getvalue()


@pytest.fixture
def registry(api):
    """A practice with records (one twin birth among them), processed as the pipeline does."""
    twins = course("C-3", family="Twin", multiple_birth=1, birth_time="08:01")
    body = batch(course("C-1", family="Quinn"), course("C-2", family="Quinn"), twins)
    ingestion_id = uuid.UUID(ingestion_id_of(api.submit(body)))
    ingestion_process(ingestion_id)
    assert Ingestion.objects.get(id=ingestion_id).status == Ingestion.Status.COMPLETED
    return ingestion_id


def record(chart: str) -> Record:
    return Record.objects.get(external_record_id=chart)


def test_a_healthy_registry_passes(registry):
    assert check() == (True, "The derived tables agree with the records.\n", "")


def break_counts(ingestion_id):
    BirthCount.objects.filter(group="all").update(births=F("births") + 1)


def break_days_sent(ingestion_id):
    SubmissionCount.objects.update(courses=F("courses") + 1)


def break_keys_of_a_voided_record(ingestion_id):
    Record.objects.filter(id=record("C-1").id).update(voided=True)


def break_keys_missing(ingestion_id):
    MatchKey.objects.filter(record=record("C-1")).delete()


def break_keys_fingerprint(ingestion_id):
    MatchKey.objects.filter(record=record("C-2")).update(fingerprint=12345)


def break_keys_too_many(ingestion_id):
    key = MatchKey.objects.filter(record=record("C-2")).first()
    MatchKey.objects.create(
        record=key.record, practice_id=key.practice_id, fingerprint=key.fingerprint, time=7
    )


def break_receipt_counts(ingestion_id):
    Ingestion.objects.filter(id=ingestion_id).update(accepted_count=F("accepted_count") + 5)


def break_outcome_rows(ingestion_id):
    OutcomeChunk.objects.filter(ingestion_id=ingestion_id).delete()


def break_staged_left(ingestion_id):
    StagedChunk.objects.create(
        ingestion_id=ingestion_id, seq=99, first_index=0, entry_count=1, ciphertext=b"x"
    )


BREAKAGES = {
    break_counts: ("counts", "kept count cell(s) differ from a recount"),
    break_days_sent: ("days sent", "1 day(s) sent differ from a recount"),
    break_keys_of_a_voided_record: ("match keys", "1 keys of voided records"),
    break_keys_missing: ("match keys", "1 live records without match keys"),
    break_keys_fingerprint: ("match keys", "1 records whose match keys are not their"),
    break_keys_too_many: ("match keys", "1 records with more match keys than children"),
    break_receipt_counts: ("receipts", "count differs from their outcome rows"),
    break_outcome_rows: ("receipts", "count differs from their outcome rows"),
    break_staged_left: ("staged chunks", "1 staged chunk(s) left by 1 finished ingestion(s)"),
}


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda breakage: breakage.__name__)
def test_each_inconsistency_is_named_and_fixed(registry, practice, breakage):
    breakage(registry)
    check_name, words = BREAKAGES[breakage]

    passed, _, named = check()
    assert not passed
    assert f"{check_name}: " in named and words in named
    if check_name in ("match keys", "counts", "days sent"):
        assert f"practice {practice.id}: " in named
    if check_name in ("receipts", "staged chunks"):
        assert str(registry) in named

    passed, fixed, _ = check("--fix")
    assert passed, fixed
    assert f"fixed: {check_name}: " in fixed
    assert check() == (True, "The derived tables agree with the records.\n", "")


def test_a_rebuilt_record_still_matches_on_its_fingerprint(api, registry):
    MatchKey.objects.filter(record=record("C-1")).delete()
    check("--fix")
    ingestion_process(uuid.UUID(ingestion_id_of(api.submit(course("C-9", family="Quinn")))))
    assert record("C-9").suspected_duplicate


def test_a_receipt_purged_by_retention_is_no_inconsistency(registry, settings):
    OutcomeChunk.objects.filter(ingestion_id=registry).delete()
    Ingestion.objects.filter(id=registry).update(receipt_purged_at=timezone.now())
    assert check()[0]

    Ingestion.objects.filter(id=registry).update(receipt_purged_at=None)  # purge under way
    long_ago = timezone.now() - timedelta(days=settings.REGISTRY_RECEIPT_RETENTION_DAYS + 1)
    Ingestion.objects.filter(id=registry).update(completed_at=long_ago)
    assert check()[0]
