"""A sandbox practice through the API, and its reset (command and settings page)."""

from __future__ import annotations

import re
import threading
import time

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from ingestion.sandbox.services import NotASandbox, sandbox_reset
from keys.models import ApiKey
from registry.models import (
    Attendance,
    BirthCount,
    Child,
    MatchKey,
    Membership,
    Practice,
    Provider,
    Record,
    RecordVersion,
    ReviewDecision,
    Transfer,
)
from registry.review.services import record_keep, record_merge
from registry.statistics.counts import counts_differences
from registry.statistics.submissions import submissions_differences
from tests.factories import batch, course, retraction_document
from tests.ingestion.conftest import Api, mint
from tests.ingestion.lifecycle.test_lifecycle import ingest
from tests.registry.factories import member

pytestmark = pytest.mark.django_db

RESET_PAGE = "/settings/sandbox/"
PER_PRACTICE = [Record, Provider, BirthCount, Ingestion, MatchKey]
PER_RECORD = [Child, Attendance, Transfer, RecordVersion, ReviewDecision]


@pytest.fixture
def sandbox(db) -> Practice:
    return Practice.objects.create(slug="acme-test", name="Acme EHR (test)", sandbox=True)


@pytest.fixture
def sandbox_api(sandbox, client) -> Api:
    return Api(client, mint(sandbox), sandbox)


def held(practice: Practice) -> dict[str, int]:
    """How many rows of each table hang on the practice."""
    counts = {
        model.__name__: model.objects.filter(practice=practice).count() for model in PER_PRACTICE
    }
    for model in PER_RECORD:
        counts[model.__name__] = model.objects.filter(record__practice=practice).count()
    ingestions = Ingestion.objects.filter(practice=practice)
    counts["StagedChunk"] = StagedChunk.objects.filter(ingestion__in=ingestions).count()
    counts["OutcomeChunk"] = OutcomeChunk.objects.filter(ingestion__in=ingestions).count()
    return counts


def fill(api: Api, reviewer: User) -> None:
    """Records of every kind, their history, a merge and a kept flag, a queued ingestion."""
    transfer = {
        "resource": {
            "resourceType": "Encounter",
            "status": "finished",
            "class": {"code": "IMP"},
            "hospitalization": {"dischargeDisposition": {"coding": [{"code": "other-hcf"}]}},
        }
    }
    ingest(api, batch(*(course(f"C-{i}", family=f"F{'x' * i}") for i in range(5))))
    ingest(api, course("C-0", extra=[transfer]))
    ingest(api, course("DUP-A", family="Twin"))
    ingest(api, course("DUP-B", family="Twin"))
    ingest(api, course("DUP-C", family="Twin"))
    ingest(api, retraction_document("C-1"))
    by_chart = {r.external_record_id: r for r in Record.objects.filter(practice=api.practice)}
    record_merge(record=by_chart["DUP-B"], survivor=by_chart["DUP-A"], by=reviewer)
    record_keep(record=by_chart["DUP-C"], by=reviewer)
    assert api.submit(course("QUEUED")).status_code == 202  # staged, never processed


def test_a_sandbox_works_as_any_practice_through_the_api(sandbox_api):
    receipt = ingest(sandbox_api, course("C-1"))
    assert receipt["accepted"] == 1
    assert Record.objects.get().practice == sandbox_api.practice


def test_records_are_never_matched_against_another_practice(sandbox_api, api):
    live = ingest(api, course("C-1"))["outcome"]["accepted"][0]
    test = ingest(sandbox_api, course("C-1"))["outcome"]["accepted"][0]
    assert "suspected_duplicate" not in live and "suspected_duplicate" not in test
    assert not Record.objects.filter(suspected_duplicate=True).exists()


def test_reset_deletes_everything_the_sandbox_holds_and_nothing_else(sandbox_api, api):
    reviewer = member(sandbox_api.practice, "rita", Membership.Role.REVIEWER)
    # The live practice first: a claim takes other practices' waiting singles along, so the
    # sandbox's last single stays staged only if no claim follows it.
    fill(api, member(api.practice, "rory", Membership.Role.REVIEWER))
    fill(sandbox_api, reviewer)
    sandbox, live = sandbox_api.practice, api.practice
    assert all(held(sandbox)[name] for name in ("Record", "Child", "Transfer", "ReviewDecision"))
    live_before = held(live)

    done = sandbox_reset(practice=sandbox, batch=2)  # small batches: many transactions

    assert set(held(sandbox).values()) == {0}
    assert held(live) == live_before
    assert (done.records, done.ingestions) == (8, 7)
    assert ApiKey.objects.filter(practice=sandbox, revoked_at__isnull=True).exists()
    assert Membership.objects.filter(practice=sandbox).exists()
    assert counts_differences() == {}
    assert submissions_differences() == {}
    # The key still works: the next try starts clean.
    assert ingest(sandbox_api, course("C-1"))["outcome"]["accepted"][0]["amended"] is False


def test_reset_refuses_a_practice_that_is_not_a_sandbox(api):
    ingest(api, course("C-1"))
    with pytest.raises(NotASandbox):
        sandbox_reset(practice=api.practice)
    with pytest.raises(CommandError, match="not a sandbox"):
        call_command("reset_sandbox", api.practice.slug)
    assert Record.objects.count() == 1


def test_the_command_resets_a_sandbox_and_says_what_went(sandbox_api, capsys):
    ingest(sandbox_api, batch(course("C-1"), course("C-2", family="Other")))
    call_command("reset_sandbox", "acme-test")
    assert "1 ingestion(s), 2 record(s) and 1 provider(s) deleted" in capsys.readouterr().out
    assert not Record.objects.exists()
    with pytest.raises(CommandError, match="No practice"):
        call_command("reset_sandbox", "nowhere")


@pytest.mark.django_db(transaction=True)
def test_reset_waits_for_the_practice_lock(sandbox, client):
    """Records go under the practice lock: while another transaction holds it (an ingestion
    applying a chunk, a review decision), the reset waits, then deletes."""
    from django.db import connections

    from registry.locks import PRACTICE_LOCK_NAMESPACE

    ingest(Api(client, mint(sandbox), sandbox), course("C-1"))
    holder = connections.create_connection("default")
    holder.set_autocommit(False)
    with holder.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)", [PRACTICE_LOCK_NAMESPACE, sandbox.pk]
        )
    finished = []

    def reset() -> None:
        try:
            finished.append(sandbox_reset(practice=sandbox))
        finally:
            connection.close()

    worker = threading.Thread(target=reset)
    worker.start()
    try:
        wait_until(lambda: waiting_for_advisory_lock(holder), "the reset to wait for the lock")
        assert Record.objects.filter(practice=sandbox).exists() and not finished
    finally:
        holder.rollback()  # releases the lock
        worker.join(timeout=60)
        holder.close()
    assert finished[0].records == 1
    assert not Record.objects.filter(practice=sandbox).exists()


def waiting_for_advisory_lock(observer) -> bool:
    with observer.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return bool(cursor.fetchone()[0])


def wait_until(condition, what: str, attempts: int = 600) -> None:
    for _ in range(attempts):
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"waited in vain for {what}")


# -- the settings page -------------------------------------------------------------------------


def signed_in(client, user):
    client.force_login(user)
    return client


def test_every_settings_page_of_a_sandbox_says_so_plainly(sandbox, practice, client):
    staff = member(sandbox, "sam")
    Membership.objects.create(user=staff, practice=practice)
    signed_in(client, staff)
    for url in ("/settings/key/", "/settings/statistics/", RESET_PAGE):
        page = client.get(url, {"practice": "acme-test"}).content.decode()
        assert "Sandbox practice: test data only." in page, url
        assert 'href="/settings/sandbox/?practice=acme-test"' in page, url
        assert '<a href="/settings/sandbox/"' in page, url  # in the settings nav
    live_page = client.get("/settings/key/", {"practice": practice.slug}).content.decode()
    assert "Sandbox practice" not in live_page and "Sandbox data" not in live_page
    assert client.get(RESET_PAGE, {"practice": practice.slug}).status_code == 404


def test_staff_confirm_then_delete_and_the_result_is_announced(sandbox_api, client):
    ingest(sandbox_api, course("C-1"))
    signed_in(client, member(sandbox_api.practice, "sam"))
    confirm = client.get(RESET_PAGE).content.decode()
    assert 'data-testid="sandbox-records">1<' in confirm
    assert 'class="button button--danger">Delete all sandbox data</button>' in confirm
    assert Record.objects.exists()  # a GET deletes nothing

    response = client.post(RESET_PAGE, follow=True)
    assert response.redirect_chain == [("/settings/sandbox/?practice=acme-test", 302)]
    page = response.content.decode()
    assert (
        'role="status"' in page and "All sandbox data deleted: 1 record, 1 ingestion with" in page
    )
    assert 'data-testid="sandbox-empty"' in page and re.search(
        r"settings/focus-result\.[0-9a-f]+\.js", page
    )
    assert not Record.objects.exists() and not Ingestion.objects.exists()


def test_a_reviewer_sees_the_page_but_may_not_delete(sandbox_api, client):
    ingest(sandbox_api, course("C-1"))
    signed_in(client, member(sandbox_api.practice, "rita", Membership.Role.REVIEWER))
    page = client.get(RESET_PAGE).content.decode()
    assert "Staff members of this practice delete its sandbox data." in page
    assert "button--danger" not in page
    assert client.post(RESET_PAGE).status_code == 403
    assert Record.objects.exists()
