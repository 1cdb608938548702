"""The kept counts always equal a recount: the statistics' (registry.statistics.counts, by
birth year and by day received) of the records, and what each practice sent
(registry.statistics.submissions) of its ingestions."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from itertools import count

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db.models import F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingestion.fhir import Child, CourseOfCare, Provider, Retraction
from ingestion.intake.services import ingestion_submit
from ingestion.intake.submission import parse_submission
from ingestion.lifecycle.applying import records_apply
from ingestion.models import Ingestion, StagedChunk
from ingestion.pipeline.process import ingestion_attempt, ingestion_process
from registry.models import BirthCount, Practice, ReceivedCount, Record, SubmissionCount
from registry.review.services import ReviewError, record_keep, record_merge, record_void
from registry.statistics.counts import (
    counts_differences,
    counts_rebuild,
    counts_recount,
    counts_stored,
    received_day,
)
from registry.statistics.selectors import stats_for_practice
from registry.statistics.submissions import submissions_differences
from tests import factories

pytestmark = pytest.mark.django_db

ROLES = ["midwife", "doula", "nurse", "assistant", "other"]
WARNING = {"severity": "warning", "code": "value", "diagnostics": "A rule."}
_practices = count()


def course(chart: str, **fields) -> CourseOfCare:
    fields.setdefault("children", (Child(birth_order=1, outcome="live_birth", birth_year=2024),))
    fields.setdefault("consent_granted", True)
    fields.setdefault("fingerprint", None)
    return CourseOfCare(reference="Bundle", external_record_id=chart, **fields)


def apply(practice: Practice, *results) -> None:
    records_apply(practice=practice, results=list(results), ingestion_id=None)


@pytest.fixture
def root(db) -> User:
    return User.objects.create_superuser("root-counts", password="x")


def test_ingestion_amendment_and_retraction_keep_the_counts_equal_to_a_recount(st_mary):
    nurse = Provider(stable_id="N-1", role="nurse")
    apply(st_mary, course("A", providers=(nurse,), attended_by=("N-1",)), course("B"))
    assert counts_stored() == counts_recount()
    assert stats_for_practice(practice=st_mary)["by_attendant_role"]["nurse"]["births"] == 1
    apply(
        st_mary,
        course(
            "A",
            children=(Child(birth_order=1, outcome="live_birth", birth_year=2023),),
            providers=(Provider(stable_id="N-1", role="midwife"),),
            attended_by=("N-1",),
        ),
    )
    assert counts_differences() == {}
    by_role = stats_for_practice(practice=st_mary)["by_attendant_role"]
    assert (by_role["nurse"]["births"], by_role["midwife"]["births"]) == (0, 1)
    apply(st_mary, Retraction(reference="Bundle", external_record_id="B"))
    assert counts_differences() == {}
    assert stats_for_practice(practice=st_mary)["births"] == 1


def test_a_later_change_of_a_providers_role_changes_no_past_count(st_mary):
    apply(
        st_mary,
        course("A", providers=(Provider(stable_id="P", role="doula"),), attended_by=("P",)),
    )
    apply(
        st_mary,
        course("B", providers=(Provider(stable_id="P", role="nurse"),), attended_by=("P",)),
    )
    by_role = stats_for_practice(practice=st_mary)["by_attendant_role"]
    assert (by_role["doula"]["births"], by_role["nurse"]["births"]) == (1, 1)
    assert counts_differences() == {}


def test_review_decisions_move_the_counts_in_the_same_transaction(st_mary, root):
    apply(st_mary, course("A", fingerprint="f" * 64), course("B", fingerprint="f" * 64))
    flagged = Record.objects.get(external_record_id="B")
    assert stats_for_practice(practice=st_mary)["suspected_duplicates"] == 1
    record_keep(record=flagged, by=root)
    assert stats_for_practice(practice=st_mary)["suspected_duplicates"] == 0
    record_merge(record=flagged, survivor=Record.objects.get(external_record_id="A"), by=root)
    assert stats_for_practice(practice=st_mary)["births"] == 1
    assert counts_differences() == {}


def test_recount_statistics_check_finds_a_drift_and_a_rebuild_repairs_it(st_mary):
    apply(st_mary, course("A"), course("B"))
    call_command("recount_statistics", "--check")
    BirthCount.objects.filter(practice=st_mary, group="all").update(births=7)
    with pytest.raises(CommandError, match="differ from a recount"):
        call_command("recount_statistics", "--check")
    call_command("recount_statistics")
    call_command("recount_statistics", "--check")
    assert stats_for_practice(practice=st_mary)["births"] == 2


def received(practice: Practice) -> dict:
    """The practice's counts by day received: (births, live births, fetal deaths)."""
    return {
        row.day: (row.births, row.live_births, row.fetal_deaths)
        for row in ReceivedCount.objects.filter(practice=practice)
        if row.births
    }


def test_the_counts_by_day_received_stay_on_the_day_a_record_was_first_received(st_mary):
    apply(st_mary, course("A"), course("B"))
    # A was received three days before B (moved, then the counts rebuilt from the records).
    Record.objects.filter(external_record_id="A").update(created_at=F("created_at") - timedelta(3))
    counts_rebuild(practice_id=st_mary.pk)
    first, second = (
        received_day(Record.objects.get(external_record_id=chart).created_at) for chart in "AB"
    )
    assert received(st_mary) == {first: (1, 1, 0), second: (1, 1, 0)}

    fetal = (Child(birth_order=1, outcome="fetal_death", birth_year=2024),)
    apply(st_mary, course("A", children=fetal))  # the amendment stays on A's first day
    assert received(st_mary) == {first: (1, 0, 1), second: (1, 1, 0)}
    apply(st_mary, Retraction(reference="Bundle", external_record_id="A"))
    assert received(st_mary) == {second: (1, 1, 0)}
    assert counts_differences() == {}
    # Every record is in one day's cell as in its birth year's "all" cell.
    births = sum(BirthCount.objects.filter(practice=st_mary, group="all").values_list("births"), ())
    assert sum(births) == sum(day[0] for day in received(st_mary).values())


def test_recount_statistics_checks_and_rebuilds_the_days_received_and_sent(st_mary):
    apply(st_mary, course("A"))
    ingestion_process(_submitted(st_mary, factories.course("C1"), days_ago=1).id)
    out = StringIO()
    call_command("recount_statistics", "--check", stdout=out)
    assert out.getvalue().splitlines() == [
        "The kept counts equal a recount.",
        "The days sent equal a recount of the ingestions.",
    ]
    ReceivedCount.objects.filter(practice=st_mary).update(births=F("births") + 1)  # one day
    with pytest.raises(CommandError, match=r"^1 kept count cell\(s\) differ from a recount"):
        call_command("recount_statistics", "--check")
    SubmissionCount.objects.filter(practice=st_mary).update(courses=7)
    with pytest.raises(CommandError, match=r"1 day\(s\) sent differ from a recount"):
        call_command("recount_statistics", "--check")
    out = StringIO()
    call_command("recount_statistics", stdout=out)
    assert out.getvalue().splitlines() == [
        "Rebuilt the counts; 1 cell(s) had differed.",
        "Rebuilt the days sent; 1 day(s) had differed.",
    ]
    call_command("recount_statistics", "--check")
    assert SubmissionCount.objects.get(practice=st_mary).courses == 1


def test_the_data_quality_counts_follow_the_records(st_mary):
    twins = (
        Child(birth_order=1, outcome="live_birth", birth_year=2024, birth_weight_grams=3000),
        Child(birth_order=2, outcome="live_birth", birth_year=2024),
    )
    other = Provider(stable_id="O", role="other")
    apply(
        st_mary,
        course(
            "A",
            children=twins,
            providers=(other,),
            attended_by=("O",),
            consent_decided=True,
            warnings=(WARNING,),
            timeliness="days_6_10",
        ),
        course("B", timeliness="days_0_5"),
        course("C", children=(Child(birth_order=1, outcome="fetal_death", birth_year=2024),)),
    )
    row = BirthCount.objects.get(practice=st_mary, birth_year=2024, group="all")
    assert (row.births, row.live_births, row.known_birth_weight) == (3, 3, 1)
    assert (row.live_births_attended, row.live_births_consent_decided) == (2, 2)
    assert row.with_warning == 1
    assert (row.timeliness_known, row.received_within_5_days, row.received_within_10_days) == (
        2,
        1,
        2,
    )
    assert counts_differences() == {}


def test_an_amendment_keeps_the_first_receipts_timeliness_and_replaces_the_rest(st_mary):
    apply(st_mary, course("A", timeliness="days_0_5", warnings=(WARNING,)))
    apply(st_mary, course("A", timeliness="days_over_10", consent_decided=True))
    record = Record.objects.get(external_record_id="A")
    assert (record.timeliness, record.drew_warning, record.consent_decided) == (
        "days_0_5",
        False,
        True,
    )
    row = BirthCount.objects.get(practice=st_mary, birth_year=2024, group="all")
    assert (row.received_within_5_days, row.with_warning) == (1, 0)
    assert counts_differences() == {}


# --- Random histories --------------------------------------------------------------------------

years = st.one_of(st.none(), st.integers(2019, 2022))
children = st.lists(
    st.builds(
        lambda outcome, year, weight, weeks, apgar: (outcome, year, weight, weeks, apgar),
        st.sampled_from(["live_birth", "live_birth", "fetal_death"]),
        years,
        st.one_of(st.none(), st.integers(400, 4500)),
        st.one_of(st.none(), st.integers(22, 42)),
        st.one_of(st.none(), st.integers(0, 10)),
    ),
    min_size=0,
    max_size=3,
)
submission = st.tuples(
    st.just("submit"),
    st.integers(0, 5),  # chart
    children,
    st.booleans(),  # consent
    st.sampled_from([None, "a" * 64, "b" * 64]),  # fingerprint: shared ones flag duplicates
    st.lists(st.tuples(st.integers(0, 3), st.sampled_from(ROLES)), max_size=3),  # providers
    st.lists(st.integers(0, 3), max_size=3),  # attended by
    st.tuples(  # data quality: a warning drawn, a consent decision, the timeliness bucket
        st.booleans(),
        st.booleans(),
        st.sampled_from([None, "days_0_5", "days_6_10", "days_over_10"]),
    ),
)
# Sent through the pipeline (submitted, then processed as a worker would): a course, a
# retraction or a rejected entry, as singles (one at a time, or several claimed together), as
# a batch, or as a batch whose last chunk cannot be read (it fails after its first chunks).
sent_item = st.one_of(
    st.tuples(
        st.just("course"),
        st.integers(0, 5),  # chart
        st.sampled_from(["Ames", "Baker"]),  # family: the same one draws a duplicate flag
        st.integers(1500, 4000),  # weight
    ),
    st.tuples(st.just("retract"), st.integers(0, 5)),
    st.just(("reject",)),
)
sent = st.tuples(
    st.just("sent"),
    st.sampled_from(["single", "singles", "batch", "broken"]),
    st.lists(sent_item, min_size=1, max_size=4),
    st.integers(0, 2),  # received this many days ago
)
operation = st.one_of(
    submission,
    st.lists(submission, min_size=2, max_size=3).map(lambda batch: ("batch", batch)),
    st.tuples(st.just("retract"), st.integers(0, 5)),
    st.tuples(st.sampled_from(["keep", "void", "merge"]), st.integers(0, 5), st.integers(0, 5)),
    sent,
)


def _course(submit) -> CourseOfCare:
    _, chart, kids, consent, fingerprint, providers, attended, quality = submit
    warned, decided, timeliness = quality
    by_id = {
        f"P{number}": Provider(stable_id=f"P{number}", role=role) for number, role in providers
    }
    return course(
        f"C{chart}",
        children=tuple(
            Child(
                birth_order=order,
                outcome=outcome,
                birth_year=year,
                birth_weight_grams=weight,
                gestational_age_weeks=weeks,
                apgar_5=apgar,
            )
            for order, (outcome, year, weight, weeks, apgar) in enumerate(kids, start=1)
        ),
        consent_granted=consent,
        fingerprint=fingerprint,
        providers=tuple(by_id.values()),
        attended_by=tuple(sorted({f"P{n}" for n in attended} & by_id.keys())),
        warnings=(WARNING,) if warned else (),
        consent_decided=decided,
        timeliness=timeliness,
    )


def _sent_body(item, *, single: bool) -> dict:
    if item[0] == "course":
        _, chart, family, weight = item
        return factories.course(f"C{chart}", family=family, weight_grams=weight)
    if item[0] == "retract":
        chart = f"C{item[1]}"
        return factories.retraction_document(chart) if single else factories.delete_entry(chart)
    if single:  # no course in it: rejected
        return {"resourceType": "Bundle", "type": "document", "entry": []}
    return {**factories.course("X"), "identifier": {}}  # no chart number: rejected


def _submitted(practice: Practice, body: dict, days_ago: int) -> Ingestion:
    submission = parse_submission(factories.dumps(body), chunk_entries=2, chunk_bytes=1 << 22)
    ingestion, _ = ingestion_submit(practice=practice, submission=submission, idempotency_key=None)
    if days_ago:
        Ingestion.objects.filter(id=ingestion.id).update(
            queued_at=F("queued_at") - timedelta(days=days_ago)
        )
    return ingestion


def _send(practice: Practice, how: str, items: list, days_ago: int) -> None:
    if how in ("single", "singles"):
        ingestions = [
            _submitted(practice, _sent_body(item, single=True), days_ago)
            for item in (items if how == "singles" else items[:1])
        ]
        for ingestion in ingestions:  # the first's claim takes the others along
            ingestion_process(ingestion.id)
        return
    ingestion = _submitted(
        practice, factories.batch(*(_sent_body(item, single=False) for item in items)), days_ago
    )
    if how == "broken":  # its last chunk does not decrypt: the ingestion fails at it
        last = StagedChunk.objects.filter(ingestion=ingestion).order_by("-seq").first()
        StagedChunk.objects.filter(id=last.id).update(ciphertext=b"\x01unreadable")
    ingestion_attempt(ingestion.id)


def _review(practice: Practice, action: str, chart: int, other: int, by: User) -> None:
    records = Record.objects.filter(practice=practice)
    record = records.filter(external_record_id=f"C{chart}").first()
    survivor = records.filter(external_record_id=f"C{other}").first()
    if record is None or (action == "merge" and survivor is None):
        return
    try:
        if action == "keep":
            record_keep(record=record, by=by)
        elif action == "void":
            record_void(record=record, by=by)
        else:
            record_merge(record=record, survivor=survivor, by=by)
    except ReviewError:
        pass  # a decision that does not apply changes nothing


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=st.lists(st.tuples(st.integers(0, 1), operation), min_size=1, max_size=12))
def test_the_counts_equal_a_recount_after_any_history(root, history):
    practices = [Practice.objects.create(slug=f"h-{next(_practices)}") for _ in range(2)]
    for which, step in history:
        practice = practices[which]
        kind = step[0]
        if kind == "submit":
            apply(practice, _course(step))
        elif kind == "batch":
            apply(practice, *(_course(one) for one in step[1]))
        elif kind == "retract":
            apply(practice, Retraction(reference="Bundle", external_record_id=f"C{step[1]}"))
        elif kind == "sent":
            _send(practice, *step[1:])
        else:
            _review(practice, kind, step[1], step[2], root)
    for practice in practices:
        assert counts_differences(practice_id=practice.pk) == {}
        assert submissions_differences(practice_id=practice.pk) == {}
