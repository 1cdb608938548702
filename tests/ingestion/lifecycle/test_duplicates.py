"""Suspected duplicates (docs/decisions.md "What is stored"): twins apart, a birth again flagged.

Through the API and the pipeline, as a sender would see it.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connection

from registry.matching import Key, probe_statement, seek_rows
from registry.models import MatchKey, Record
from registry.review.services import record_merge
from registry.selectors import record_resemblance
from tests.factories import batch, child, course, retraction_document
from tests.ingestion.lifecycle.test_lifecycle import ingest, only_accepted, only_rejected
from tests.registry.factories import member

pytestmark = pytest.mark.django_db


def flagged(receipt: dict[str, Any]) -> list[bool]:
    assert receipt["status"] == "completed" and receipt["rejected"] == 0, receipt
    return [bool(e.get("suspected_duplicate")) for e in receipt["outcome"]["accepted"]]


def send(api, *courses: dict[str, Any]) -> list[bool]:
    """Each course in its own submission, in order: was each flagged?"""
    return [flagged(ingest(api, c))[0] for c in courses]


def twins_document(chart: str, **fields: Any) -> dict[str, Any]:
    """One document for both twins (orders 1 and 2, their own times)."""
    bundle = course(chart, birth_time="08:15", multiple_birth=1, **fields)
    second = child(birth_time="08:19", multiple_birth=2, patient_id="child-2")
    bundle["entry"].insert(2, {"fullUrl": "urn:uuid:child-2", "resource": second})
    return bundle


# -- twins are not duplicates --------------------------------------------------------------------


def test_twins_sent_as_two_documents_with_their_orders_are_not_flagged(api):
    assert send(api, course("T-1", multiple_birth=1), course("T-2", multiple_birth=2)) == [
        False,
        False,
    ]


def test_twins_sent_with_their_birth_times_only_are_not_flagged(api):
    twins = course("T-1", birth_time="08:15"), course("T-2", birth_time="08:19")
    assert send(api, *twins) == [False, False]


def test_twins_in_one_batch_are_not_flagged(api):
    receipt = ingest(
        api,
        batch(
            course("T-1", birth_time="08:15", multiple_birth=1),
            course("T-2", birth_time="08:19", multiple_birth=2),
        ),
    )
    assert flagged(receipt) == [False, False]


def test_triplets_are_not_flagged_and_a_resent_triplet_is(api):
    triplets = [course(f"T-{o}", birth_time=f"08:1{o}", multiple_birth=o) for o in (1, 2, 3)]
    assert send(api, *triplets) == [False, False, False]
    assert send(api, course("T-2b", birth_time="08:12", multiple_birth=2)) == [True]


def test_the_same_time_with_another_order_is_not_the_same_child(api):
    pair = (
        course("T-1", birth_time="08:15", multiple_birth=1),
        course("T-2", birth_time="08:15", multiple_birth=2),
    )
    assert send(api, *pair) == [False, False]


def test_a_document_with_both_twins_and_each_twin_alone(api):
    assert send(api, twins_document("D-1")) == [False]
    # the second twin arriving alone under its own chart resembles the twins' document
    assert send(api, course("D-2", birth_time="08:19", multiple_birth=2)) == [True]
    assert send(api, twins_document("D-3")) == [True]


# -- the same birth again is a suspected duplicate -------------------------------------------------


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ({"birth_time": "08:15"}, {"birth_time": "08:15"}),
        ({"birth_time": "08:15"}, {}),  # re-sent without its time
        ({}, {"birth_time": "08:15"}),  # its time arrives with the re-send
        ({"multiple_birth": 2, "birth_time": "08:15"}, {"multiple_birth": 2}),
        ({"multiple_birth": 2}, {"birth_time": "08:15"}),
        ({}, {}),
    ],
)
def test_the_same_infant_under_a_new_chart_is_flagged(api, first, again):
    assert send(api, course("C-1", **first), course("C-2", **again)) == [False, True]


def test_the_same_infant_twice_in_one_batch_is_flagged_once(api):
    receipt = ingest(api, batch(course("C-1", birth_time="08:15"), course("C-2")))
    assert flagged(receipt) == [False, True]


def test_a_minute_apart_in_seconds_is_the_same_minute(api):
    one = course("C-1", birth_time="08:15")
    other = course("C-2", birth_time="08:15")
    other["entry"][1]["resource"]["_birthDate"]["extension"][0]["valueDateTime"] = (
        "2024-03-09T15:15:59Z"
    )
    assert send(api, one, other) == [False, True]


def test_a_flood_of_one_birth_flags_every_record_after_the_first_and_stores_no_pairs(api):
    flood = [course(f"F-{i}", birth_time="08:15") for i in range(60)]
    assert flagged(ingest(api, batch(*flood))) == [False] + [True] * 59
    assert MatchKey.objects.count() == 60  # one key per child, never one per pair
    # the next one, in another submission, is flagged too
    assert send(api, course("F-60")) == [True]


# -- voided and merged records resemble nothing ----------------------------------------------------


def test_a_retracted_record_is_not_matched(api):
    only_accepted(ingest(api, course("C-1")))
    only_accepted(ingest(api, retraction_document("C-1")))
    assert not MatchKey.objects.exists()
    assert send(api, course("C-2")) == [False]


def test_a_record_retracted_in_the_same_batch_is_not_matched(api):
    receipt = ingest(api, batch(course("C-1"), retraction_document("C-1"), course("C-2")))
    assert [e.get("suspected_duplicate", False) for e in receipt["outcome"]["accepted"]] == [
        False,
        False,
        False,
    ]


def test_a_merged_record_is_not_matched(api):
    send(api, course("C-1"), course("C-2"))
    original, duplicate = (Record.objects.get(external_record_id=c) for c in ("C-1", "C-2"))
    reviewer = member(api.practice, "rita", "reviewer", is_staff=True)
    record_merge(record=duplicate, survivor=original, by=reviewer)
    assert not MatchKey.objects.filter(record=duplicate).exists()
    assert record_resemblance(record=original).record_ids == []
    assert send(api, course("C-3", family="Other")) == [False]


def test_a_merged_record_sent_again_comes_back_flagged(api):
    send(api, course("C-1"), course("C-2"))
    original, duplicate = (Record.objects.get(external_record_id=c) for c in ("C-1", "C-2"))
    record_merge(
        record=duplicate,
        survivor=original,
        by=member(api.practice, "rita", "reviewer", is_staff=True),
    )
    assert send(api, course("C-2")) == [True]
    assert MatchKey.objects.filter(record=duplicate).count() == 1


# -- amendments: spec 3, "would make the record a duplicate of a different record" -------------


def test_a_correction_that_makes_one_twin_the_other_is_refused(api):
    send(api, course("T-1", birth_time="08:15", multiple_birth=1))
    send(api, course("T-2", birth_time="08:19", multiple_birth=2))
    entry = only_rejected(ingest(api, course("T-2", birth_time="08:15", multiple_birth=1)))
    issue = entry["operation_outcome"]["issue"][0]
    assert issue["code"] == "conflict"
    assert "duplicate of a different record" in issue["diagnostics"]
    assert Record.objects.get(external_record_id="T-2").version == 1


def test_a_correction_of_a_twin_that_keeps_it_apart_is_accepted(api):
    send(api, course("T-1", birth_time="08:15", multiple_birth=1))
    send(api, course("T-2", birth_time="08:19", multiple_birth=2))
    entry = only_accepted(ingest(api, course("T-2", multiple_birth=2, weight_grams=2900)))
    assert entry["version"] == 2


def test_a_correction_to_another_mother_who_is_on_file_is_refused(api):
    send(api, course("C-1", family="Other"), course("C-2"))
    entry = only_rejected(ingest(api, course("C-2", family="Other")))
    assert entry["operation_outcome"]["issue"][0]["code"] == "conflict"


def test_correcting_a_flagged_duplicate_is_not_a_conflict(api):
    send(api, course("C-1"), course("C-2"))
    entry = only_accepted(ingest(api, course("C-2", birth_time="08:15")))
    assert entry["version"] == 2


# -- the probes are index seeks --------------------------------------------------------------------


def _plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(node for child in plan.get("Plans", []) for node in _plan_nodes(child))]


def test_probing_a_large_cluster_reads_at_most_one_row_per_probe(practice):
    """A 3,000-record cluster: each probe is an index seek that stops at its first row."""
    record_ids = [uuid.uuid4() for _ in range(3000)]
    Record.objects.bulk_create(
        Record(id=r, practice=practice, external_record_id=f"C-{i}")
        for i, r in enumerate(record_ids)
    )
    MatchKey.objects.bulk_create(
        MatchKey(
            record_id=r, practice=practice, fingerprint=7, time=i % 5 or None, birth_order=None
        )
        for i, r in enumerate(record_ids)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE registry_matchkey")
    probes = [
        p for key in (Key(7, 3, 1), Key(7, None, 2), Key(7, None, None)) for p in key.probes()
    ]
    sql, parameters = probe_statement(practice.pk, probes, [record_ids[0]])
    ((plans,),) = seek_rows("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, parameters)
    (plan,) = plans
    scans = [n for n in _plan_nodes(plan["Plan"]) if n.get("Relation Name") == "registry_matchkey"]
    assert scans and {n["Node Type"] for n in scans} <= {"Index Only Scan", "Index Scan"}
    for scan in scans:
        assert scan["Actual Rows"] <= 1  # per loop: LIMIT 1 stops the seek at once
        assert scan.get("Rows Removed by Filter", 0) <= 1  # at most the excluded record
