"""Waiting singles are claimed together, whichever practices sent them, and each
practice's are applied as one chunk.

The outcome must be that of applying each practice's one after another in its queue order:
the same records, versions, duplicate flags, counts, providers and receipts. Three practices
receive the same submissions; two practices' are sent interleaved and applied together by
one claim, the third's one by one, and everything the registry stored for each is compared
(fingerprints are keyed per practice, so they are compared as "which are equal", not by
value).
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from ingestion.pipeline.process import ingestion_process
from ingestion.pipeline.singles import NextSingles
from registry.models import (
    Attendance,
    BirthCount,
    Child,
    MatchKey,
    Provider,
    Record,
    RecordVersion,
    Transfer,
)
from registry.statistics.counts import counts_differences
from tests.factories import batch, course, letters, retraction_document
from tests.ingestion.conftest import ingestion_id_of

pytestmark = pytest.mark.django_db


def sequence() -> list[dict[str, Any]]:
    """Singles that depend on each other's order: every row of the lifecycle table."""
    return [
        course("A", family="Okafor", last_updated="2024-03-10T10:00:00Z"),
        course("A", family="Okafor", last_updated="2024-03-11T10:00:00Z", weight_grams=3400),
        course("A", family="Okafor", last_updated="2024-03-09T10:00:00Z"),  # stale update
        course("B", family="Okafor", midwife="MW-2"),  # a duplicate of A's birth: flagged
        course("C", family="Nguyen", weeks=34, weight_grams=2100),
        retraction_document("B"),
        course("C", family="Nguyen", weeks=35, midwife="MW-3"),  # amended, another midwife
        retraction_document("NOT-ON-FILE"),  # rejected: nothing to retract
        {"resourceType": "Bundle", "type": "document", "entry": []},  # rejected: no course
        course("B", family="Okafor", midwife="MW-2"),  # revived, flagged again
        course("D", family="Smith", born="2023-12-30", midwife="MW-4"),
        course("D", family="Smith", born="2023-12-30"),  # MW-4 stays on file, unattached
        course("C", family="Okafor"),  # would make C a duplicate of A: not merged
        retraction_document("A"),
        course("A", family="Okafor", last_updated="2024-03-12T10:00:00Z"),  # revived
    ]


def submit(api, bodies) -> list[uuid.UUID]:
    ids = []
    for body in bodies:
        response = api.submit(body)
        assert response.status_code == 202, response.content
        ids.append(uuid.UUID(ingestion_id_of(response)))
    return ids


class Labels:
    """Stable names for per-practice values (fingerprints, record ids), in order of meeting."""

    def __init__(self) -> None:
        self.names: dict[Any, str] = {}

    def __call__(self, value: Any) -> str | None:
        if value is None:
            return None
        return self.names.setdefault(value, f"#{len(self.names)}")


def stored(api, ids: list[uuid.UUID]) -> dict[str, Any]:
    """Everything the registry keeps for the practice, with per-practice values labelled."""
    practice = api.practice
    charts = dict(Record.objects.filter(practice=practice).values_list("id", "external_record_id"))
    position = {ingestion_id: i for i, ingestion_id in enumerate(ids)}
    fingerprint = Labels()

    def receipt(ingestion_id: uuid.UUID) -> Any:
        body = api.receipt(str(ingestion_id)).json()
        for entry in body["outcome"]["accepted"] if body["outcome"] else []:
            if "submission_uuid" in entry:
                entry["submission_uuid"] = charts[uuid.UUID(entry["submission_uuid"])]
            for voided in entry.get("voided_records", []):
                voided["submission_uuid"] = charts[uuid.UUID(voided["submission_uuid"])]
        body.pop("id"), body.pop("completedAt")
        return body

    records = Record.objects.filter(practice=practice).order_by("external_record_id")
    record_fields = [
        "external_record_id",
        "version",
        "voided",
        "suspected_duplicate",
        "fingerprint",
        "consent_granted",
        "birth_year",
        "mother_age_years",
        "mother_postal_prefix",
        "source_updated_at",
        "merged_into_id",
    ]
    versions = []
    for v in RecordVersion.objects.filter(record__practice=practice).order_by(
        "record__external_record_id", "version", "id"
    ):
        values = dict(v.values)
        values["fingerprint"] = fingerprint(values.get("fingerprint"))
        versions.append(
            (charts[v.record_id], v.version, v.change, values, position[v.ingestion_id])
        )
    return {
        "receipts": [receipt(i) for i in ids],
        "records": [
            {**row, "fingerprint": fingerprint(row["fingerprint"])}
            for row in records.values(*record_fields)
        ],
        "versions": versions,
        "children": sorted(
            (charts[c["record_id"]], c["birth_order"], c["outcome"], c["birth_weight_grams"])
            for c in Child.objects.filter(record__practice=practice).values()
        ),
        "attendances": sorted(
            Attendance.objects.filter(record__practice=practice).values_list(
                "record__external_record_id", "provider__stable_id", "kind", "role"
            )
        ),
        "transfers": sorted(
            Transfer.objects.filter(record__practice=practice).values_list(
                "record__external_record_id", "kind"
            )
        ),
        "providers": sorted(
            Provider.objects.filter(practice=practice).values_list(
                "stable_id", "npi", "display_name", "credentials", "role"
            )
        ),
        "match_keys": sorted(
            (charts[record_id], order)
            for record_id, order in MatchKey.objects.filter(practice=practice).values_list(
                "record_id", "birth_order"
            )
        ),
        "counts": sorted(
            BirthCount.objects.filter(practice=practice).values_list(
                "birth_year", "group", "births", "suspected_duplicates", "live_births", "preterm"
            )
        ),
    }


def test_waiting_singles_applied_together_leave_what_one_by_one_leaves(
    api, other_api, client, settings
):
    from registry.models import Practice
    from tests.ingestion.conftest import Api, mint

    third = Practice.objects.create(slug="third")
    third_api = Api(client, mint(third), third)
    mine, theirs = [], []
    for body in sequence():  # the two practices' singles interleaved in the queue
        mine += submit(api, [body])
        theirs += submit(other_api, [body])

    ingestion_process(theirs[5])  # any one's message: it takes them all, in queue order
    claimed = Ingestion.objects.filter(id__in=mine + theirs)
    assert set(claimed.values_list("status", flat=True)) == {Ingestion.Status.COMPLETED}
    assert set(claimed.values_list("attempts", flat=True)) == {1}
    assert not StagedChunk.objects.filter(ingestion_id__in=mine + theirs).exists()

    settings.REGISTRY_CLAIM_SINGLES = 1
    apart = submit(third_api, sequence())
    for ingestion_id in apart:
        ingestion_process(ingestion_id)

    one_by_one = stored(third_api, apart)
    assert stored(api, mine) == one_by_one
    assert stored(other_api, theirs) == one_by_one
    for each in (api, other_api):
        assert counts_differences(practice_id=each.practice.id) == {}
    receipts = one_by_one["receipts"]
    assert [r["accepted"] for r in receipts] == [1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1]
    assert receipts[3]["outcome"]["accepted"][0]["suspected_duplicate"] is True


def test_the_messages_of_singles_applied_together_have_nothing_left_to_do(api):
    ids = submit(api, [course(f"M-{i}", family=f"Family{'abcdefgh'[i]}") for i in range(4)])
    ingestion_process(ids[0])
    for ingestion_id in ids[1:]:
        ingestion_process(ingestion_id)  # its own message, after the combined claim
    assert OutcomeChunk.objects.filter(ingestion_id__in=ids).count() == 4
    assert Record.objects.count() == 4
    assert set(Ingestion.objects.filter(id__in=ids).values_list("attempts", flat=True)) == {1}


def test_a_claim_takes_any_practices_waiting_singles_each_practices_together(
    api, other_api, settings
):
    """Up to the limit, the practices in the order of their oldest waiting single, and each
    practice's singles together: its chunk costs much the same for one as for thirty."""
    settings.REGISTRY_CLAIM_SINGLES = 4
    mine = submit(api, [course(f"S-{i}", family=f"Family{'abcdefgh'[i]}") for i in range(2)])
    (their_batch,) = submit(other_api, [batch(course("BATCH-1", family="Zed"))])
    theirs = submit(other_api, [course("T-1"), course("T-2", family="Other")])
    mine += submit(api, [course("S-2", family="Third")])

    following = ingestion_process(mine[0])

    status = dict(Ingestion.objects.values_list("id", "status"))
    assert [status[i] for i in mine] == ["completed"] * 3  # S-2 before the older T-2
    assert [status[i] for i in theirs] == ["completed", "queued"]
    assert following == NextSingles(theirs[1])  # the claim was full: T-2 is published for
    assert status[their_batch] == "queued"

    following = ingestion_process(theirs[0])  # its practice's message: nothing left but T-2
    assert following is None
    assert Ingestion.objects.get(id=theirs[1]).status == "completed"


def test_a_full_claim_names_the_next_of_its_own_practices_waiting_singles(api, other_api, settings):
    settings.REGISTRY_CLAIM_SINGLES = 2
    (theirs,) = submit(other_api, [course("T-1")])
    mine = submit(api, [course(f"S-{i}", family=f"Family{'abcdefgh'[i]}") for i in range(3)])

    following = ingestion_process(mine[0])  # takes T-1, the oldest waiting, and not S-1

    status = dict(Ingestion.objects.values_list("id", "status"))
    assert [status[theirs], *(status[i] for i in mine)] == ["completed", "completed"] + [
        "queued"
    ] * 2
    assert following == NextSingles(mine[1])


def test_a_single_claimed_again_after_a_fruitless_claim_is_applied_alone(api):
    first, second = submit(api, [course("F-1", family="Alpha"), course("F-2", family="Beta")])
    # A claim that died: processing, its lease run out, one fruitless claim behind it.
    Ingestion.objects.filter(id=first).update(
        status=Ingestion.Status.PROCESSING,
        attempts=1,
        fruitless_claims=1,
        lease_expires_at=timezone.now() - timedelta(seconds=1),
    )
    ingestion_process(first)
    status = dict(Ingestion.objects.values_list("id", "status"))
    assert status[first] == "completed"
    assert status[second] == "queued"  # not taken along: the first is being isolated


@pytest.mark.django_db(transaction=True)
def test_no_message_is_published_for_a_single_while_one_for_its_practice_is_on_its_way(api):
    from tests.ingestion.messaging.test_republish import published

    first, second = submit(api, [course("W-1", family="Alpha"), course("W-2", family="Beta")])
    assert (published(str(first)), published(str(second))) == (1, 0)

    ingestion_process(first)  # the first's message takes the second along
    status = dict(Ingestion.objects.values_list("id", "status"))
    assert (status[first], status[second]) == ("completed", "completed")

    (third,) = submit(api, [course("W-3", family="Gamma")])
    assert published(str(third)) == 1  # the flag was cleared before the claim


@pytest.mark.django_db(transaction=True)
def test_no_message_is_published_while_one_for_another_practices_single_is_on_its_way(
    api, other_api
):
    """One flag for every practice: spread over many practices, a flag each let nearly every
    single publish a message that found its single taken by another's claim."""
    from tests.ingestion.messaging.test_republish import published

    (mine,) = submit(api, [course("P-1", family="Alpha")])
    (theirs,) = submit(other_api, [course("P-2", family="Beta")])
    assert (published(str(mine)), published(str(theirs))) == (1, 0)

    assert ingestion_process(mine) is None  # the message takes the other practice's along
    status = dict(Ingestion.objects.values_list("id", "status"))
    assert (status[mine], status[theirs]) == ("completed", "completed")
    (later,) = submit(other_api, [course("P-3", family="Gamma")])
    assert published(str(later)) == 1  # the flag was cleared before the claim


@pytest.mark.django_db(transaction=True)
def test_a_message_for_a_finished_single_still_takes_its_practices_waiting_singles(api):
    """A single taken along by another's claim may have set the flag meanwhile: singles
    submitted after it count on its message, which finds its own ingestion finished."""
    (earlier,) = submit(api, [course("E-1", family="Alpha")])
    ingestion_process(earlier)
    counting, skipped = submit(api, [course("E-2", family="Beta"), course("E-3", family="Gamma")])
    Ingestion.objects.filter(id=counting).update(status=Ingestion.Status.COMPLETED)

    ingestion_process(counting)

    assert Ingestion.objects.get(id=skipped).status == Ingestion.Status.COMPLETED


def test_with_one_single_per_claim_the_next_waiting_one_is_named(api, settings):
    settings.REGISTRY_CLAIM_SINGLES = 1
    first, second = submit(api, [course("O-1", family="Alpha"), course("O-2", family="Beta")])
    assert ingestion_process(first) == NextSingles(second)
    assert Ingestion.objects.get(id=second).status == Ingestion.Status.QUEUED
    assert ingestion_process(second) is None


def round_trips(work) -> int:
    """What ``work`` sends to PostgreSQL, counted at psycopg (Django's cursors and raw ones,
    COPY included): each call is one round trip, however many statements it carries."""
    import psycopg

    sent = 0
    originals = {name: getattr(psycopg.Cursor, name) for name in ("execute", "executemany", "copy")}

    def counting(method):
        def counted(cursor, *args, **kwargs):
            nonlocal sent
            sent += 1
            return method(cursor, *args, **kwargs)

        return counted

    try:
        for name, method in originals.items():
            setattr(psycopg.Cursor, name, counting(method))
        work()
    finally:
        for name, method in originals.items():
            setattr(psycopg.Cursor, name, method)
    return sent


def test_a_combined_claim_makes_as_many_round_trips_for_30_singles_as_for_3(api, other_api):
    """A claim's cost in statements is fixed (docs/performance.md, "Values sent apart, and
    fewer round trips"): 30 singles cost the round trips 3 do, and no more than now."""
    sent = []
    for each, count in ((api, 3), (other_api, 30)):
        ids = submit(each, [course(f"R-{i}", family=f"Family{letters(i)}") for i in range(count)])
        sent.append(round_trips(lambda ids=ids: ingestion_process(ids[0])))

    assert Ingestion.objects.filter(status=Ingestion.Status.COMPLETED).count() == 33
    # 17 in production; in the test's transaction the claim's own is a savepoint, 2 more.
    assert sent[0] == sent[1] <= 19, sent
