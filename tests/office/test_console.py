"""The registry console (/registry/) on known data: each column's figure, the sort by every
column, the filters, the pages, the CSV, and who may see it.

Day rows are written straight into the kept counts, relative to the real today, so the
windows (7 and 30 UTC days, today included) are exercised at their edges."""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from keys.models import ApiKey
from office.console import COLUMNS
from registry.models import BirthCount, Practice, ReceivedCount, Record, SubmissionCount
from registry.office import office_permission
from registry.silence import utc_today
from tests.registry.factories import PracticeFactory, RecordFactory, member

pytestmark = pytest.mark.django_db

TODAY = utc_today()


def day(ago: int) -> Any:
    return TODAY - timedelta(days=ago)


def submitted(practice: Practice, ago: int, courses: int, rejected: int = 0) -> None:
    SubmissionCount.objects.create(
        practice=practice,
        day=day(ago),
        ingestions=1,
        courses=courses,
        accepted=courses - rejected,
        rejected=rejected,
        last_received_at=datetime.combine(day(ago), time(9, 30), tzinfo=UTC),
    )


def received(practice: Practice, ago: int, **counts: int) -> None:
    ReceivedCount.objects.create(practice=practice, day=day(ago), **counts)


@pytest.fixture
def office_user(db) -> User:
    user = User.objects.create_user("olu")
    user.user_permissions.add(office_permission())
    return user


@pytest.fixture
def office(client, office_user):
    client.force_login(office_user)
    return client


@pytest.fixture
def known(db) -> dict[str, Practice]:
    """Alder: active key, sends, warnings and flags; Birch: silent, revoked key; Cedar: no
    data at all; Sandbox: hidden unless asked for."""
    alder = PracticeFactory(slug="alder", name="Alder General")
    birch = PracticeFactory(slug="birch", name="Birch Hospital")
    cedar = PracticeFactory(slug="cedar", name="Cedar Clinic")
    sandbox = PracticeFactory(slug="try-out", name="Try Out", sandbox=True)
    ApiKey.objects.create(
        practice=alder,
        prefix="rgk_aaaaaaaa",
        digest="0" * 64,
        last_used_at=datetime(2026, 11, 1, 8, 0, tzinfo=UTC),
    )
    ApiKey.objects.create(
        practice=birch,
        prefix="rgk_bbbbbbbb",
        digest="1" * 64,
        revoked_at=datetime(2026, 10, 1, tzinfo=UTC),
    )
    # Alder: 7 days = today and 6 days ago; 29 days ago is in the 30, 30 days ago is not.
    submitted(alder, 0, courses=3, rejected=1)
    submitted(alder, 6, courses=5)
    submitted(alder, 7, courses=11, rejected=1)
    submitted(alder, 29, courses=1)
    submitted(alder, 30, courses=100, rejected=50)
    received(
        alder, 0, births=8, with_warning=2, timeliness_known=4, received_within_10_days=3,
        live_births=8, known_birth_weight=8, known_gestational_age=6, known_apgar5=7,
        live_births_attended=8, live_births_consent_decided=8,
    )  # fmt: skip
    received(
        alder, 29, births=2, live_births=2, known_birth_weight=2, known_gestational_age=2,
        known_apgar5=2, live_births_attended=2, live_births_consent_decided=2,
    )  # fmt: skip
    received(alder, 30, births=50, with_warning=50, live_births=50)  # outside the 30 days
    BirthCount.objects.create(practice=alder, birth_year=2025, group="all", suspected_duplicates=2)
    BirthCount.objects.create(practice=alder, birth_year=2026, group="all", suspected_duplicates=1)
    BirthCount.objects.create(
        practice=alder, birth_year=2026, group="midwife", suspected_duplicates=1
    )
    now = datetime.now(UTC)
    for days, flagged, voided in [(40, True, False), (12, True, False), (90, True, True)]:
        RecordFactory(
            practice=alder,
            suspected_duplicate=flagged,
            voided=voided,
            created_at=now - timedelta(days=days, hours=1),
        )
    # Birch: sent in weeks 1 to 5, nothing since: silent.
    for week in range(1, 6):
        submitted(birch, 7 * week + 1, courses=2)
    received(
        birch, 8, births=4, with_warning=3, timeliness_known=2, received_within_10_days=2,
        live_births=4, known_birth_weight=1, known_gestational_age=4, known_apgar5=4,
        live_births_attended=4, live_births_consent_decided=4,
    )  # fmt: skip
    BirthCount.objects.create(practice=birch, birth_year=2026, group="all", suspected_duplicates=1)
    RecordFactory(
        practice=birch, suspected_duplicate=True, created_at=now - timedelta(days=5, hours=1)
    )
    submitted(sandbox, 1, courses=4)
    return {"alder": alder, "birch": birch, "cedar": cedar, "sandbox": sandbox}


def table(response) -> list[list[str]]:
    """The console's rows as the page shows them, a list of cell texts per row."""
    html = response.content.decode()
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = []
    for chunk in body.split("<tr")[1:]:
        cells = [_text(cell.split("</td>", 1)[0]) for cell in chunk.split("<td")[1:]]
        rows.append(cells)
    return rows


def _text(fragment: str) -> str:
    text = re.sub(r"<[^>]+>", " ", fragment.split(">", 1)[1])
    return " ".join(text.replace("&#x27;", "'").split())


def csv_rows(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def by_code(response) -> dict[str, dict[str, str]]:
    return {row["code"]: row for row in csv_rows(response)}


@pytest.fixture(params=["postgresql", "elsewhere"])
def vendor(request, monkeypatch):
    """The console's statements are PostgreSQL's; elsewhere (the embedded SQLite default) it
    reads the same rows through the ORM: both must give the same figures."""
    if request.param == "elsewhere":
        from django.db import connection

        monkeypatch.setattr(connection, "vendor", "sqlite")
    return request.param


def test_each_column_on_known_data(office, known, vendor):
    rows = by_code(office.get("/registry/console.csv"))
    assert set(rows) == {"alder", "birch", "cedar"}  # sandbox hidden
    alder = rows["alder"]
    assert alder["silent"] == "0"
    assert alder["key"] == "active"
    assert alder["key_last_used"] == "2026-11-01T08:00:00+00:00"
    assert alder["last_received"].startswith(f"{TODAY.isoformat()}T09:30")
    assert (alder["courses_7_days"], alder["courses_30_days"]) == ("8", "20")
    assert (alder["rejected_30_days"], alder["rejected_share_30_days"]) == ("2", "0.1000")
    assert (alder["warned_30_days"], alder["births_30_days"]) == ("2", "10")
    assert alder["warned_share_30_days"] == "0.2000"
    assert (alder["within_10_days_30_days"], alder["timeliness_known_30_days"]) == ("3", "4")
    assert alder["within_10_days_share_30_days"] == "0.7500"
    assert alder["least_complete_item"] == "gestational_age"  # 8 of 10; Apgar is 9 of 10
    assert alder["least_complete_share_30_days"] == "0.8000"
    assert alder["review_backlog"] == "3"  # group all, both years; not the midwife's row
    oldest = datetime.fromisoformat(alder["oldest_flagged_received"])
    assert 40 <= (datetime.now(UTC) - oldest).days < 41  # the voided one, 90 days, is not
    birch = rows["birch"]
    assert (birch["silent"], birch["key"], birch["courses_7_days"]) == ("1", "revoked", "0")
    assert birch["courses_30_days"] == "8"  # days 8, 15, 22 and 29; not 36
    assert birch["rejected_share_30_days"] == "0.0000"
    assert (birch["warned_share_30_days"], birch["within_10_days_share_30_days"]) == (
        "0.7500",
        "1.0000",
    )
    assert (birch["least_complete_item"], birch["least_complete_share_30_days"]) == (
        "birth_weight",
        "0.2500",
    )
    assert birch["review_backlog"] == "1"
    cedar = rows["cedar"]
    assert (cedar["key"], cedar["last_received"], cedar["review_backlog"]) == ("none", "", "0")
    assert cedar["least_complete_item"] == cedar["warned_share_30_days"] == ""
    assert cedar["rejected_share_30_days"] == ""  # nothing to divide: blank, not 0


def test_the_page_shows_the_same_figures_silent_first(office, known):
    response = office.get("/registry/")
    assert response.status_code == 200
    rows = table(response)
    assert [row[0].split()[0] for row in rows] == ["Birch", "Alder", "Cedar"]
    assert "Silent" in rows[0][0]
    alder = rows[1]
    assert alder[1:2] == ["Active"]
    assert alder[4:6] == ["8", "20"]
    assert alder[6] == "10.0% (2 of 20)"
    assert alder[7] == "20.0% (2 of 10)"
    assert alder[8] == "75.0% (3 of 4)"
    assert alder[9] == "Gestational age: 80.0% (8 of 10)"
    assert alder[10] == "3"
    assert alder[11].startswith("40 days")


def test_a_fixed_number_of_queries_whatever_the_practices(office, known):
    with CaptureQueriesContext(connection) as few:
        office.get("/registry/")
    for n in range(30):
        practice = PracticeFactory(slug=f"more-{n}")
        submitted(practice, 1, courses=1)
        received(practice, 1, births=1, live_births=1)
        BirthCount.objects.create(practice=practice, birth_year=2026, group="all")
    with CaptureQueriesContext(connection) as many:
        office.get("/registry/")
    assert len(many) == len(few)


@pytest.mark.parametrize("column", [c.key for c in COLUMNS])
def test_every_column_sorts_both_ways_unknown_last(office, known, column):
    ascending = [r["code"] for r in csv_rows(office.get(f"/registry/console.csv?sort={column}"))]
    descending = [
        r["code"] for r in csv_rows(office.get(f"/registry/console.csv?sort={column}&dir=desc"))
    ]
    assert sorted(ascending) == sorted(descending) == ["alder", "birch", "cedar"]
    expected = SORTED[column]
    assert ascending == expected[0], column
    assert descending == expected[1], column
    page = office.get(f"/registry/?sort={column}&dir=desc").content.decode()
    assert page.count('aria-sort="descending"') == 1


# (ascending, descending) by column for the known practices; unknown values last either way.
SORTED = {
    "practice": (["alder", "birch", "cedar"], ["cedar", "birch", "alder"]),
    "key": (["cedar", "birch", "alder"], ["alder", "birch", "cedar"]),
    "key_used": (["alder", "birch", "cedar"], ["alder", "birch", "cedar"]),
    "received": (["birch", "alder", "cedar"], ["alder", "birch", "cedar"]),
    "courses_7": (["birch", "cedar", "alder"], ["alder", "birch", "cedar"]),
    "courses_30": (["cedar", "birch", "alder"], ["alder", "birch", "cedar"]),
    "rejected": (["birch", "alder", "cedar"], ["alder", "birch", "cedar"]),
    "warned": (["alder", "birch", "cedar"], ["birch", "alder", "cedar"]),
    "timely": (["alder", "birch", "cedar"], ["birch", "alder", "cedar"]),
    "complete": (["birch", "alder", "cedar"], ["alder", "birch", "cedar"]),
    "backlog": (["cedar", "birch", "alder"], ["alder", "birch", "cedar"]),
    # By the age of the oldest flagged record: the youngest first, ascending.
    "oldest": (["birch", "alder", "cedar"], ["alder", "birch", "cedar"]),
}


def test_filters_search_sandbox_and_silent(office, known):
    def codes(query: str) -> list[str]:
        return [r["code"] for r in csv_rows(office.get(f"/registry/console.csv?{query}"))]

    assert codes("q=birch") == ["birch"]
    assert codes("q=HOSPITAL") == ["birch"]  # the name, any case
    assert codes("q=nothing-like-it") == []
    assert "try-out" in codes("sandbox=1")
    assert codes("silent=1") == ["birch"]
    assert codes("silent=1&q=alder") == []
    # A sandbox practice is never silent, whatever it sent.
    assert by_code(office.get("/registry/console.csv?sandbox=1"))["try-out"]["silent"] == "0"


def test_bad_input_is_read_as_the_default_never_an_error(office, known):
    for query in ["sort=nope&dir=sideways", "page=abc", "page=999", "q=" + "x" * 500, "silent=2"]:
        assert office.get(f"/registry/?{query}").status_code == 200, query


def test_fifty_practices_a_page(office, db):
    for n in range(51):
        PracticeFactory(slug=f"p-{n:02d}", name=f"P {n:02d}")
    first = office.get("/registry/")
    second = office.get("/registry/?page=2")
    assert len(table(first)) == 50 and len(table(second)) == 1
    assert table(second)[0][0].startswith("P 50")
    assert 'rel="next"' in first.content.decode() and 'rel="prev"' in second.content.decode()
    assert len(csv_rows(office.get("/registry/console.csv"))) == 51  # the CSV is every page


def test_the_links_lead_to_the_practice_as_its_staff_see_it(office, known):
    page = office.get("/registry/").content.decode()
    assert 'href="/settings/key/?practice=alder"' in page
    assert 'href="/settings/members/?practice=alder"' in page
    assert office.get("/settings/members/?practice=alder").status_code == 200
    assert 'href="/registry/practices/alder/scorecard"' in page
    assert office.get("/registry/practices/alder/scorecard").status_code == 200
    assert 'href="/registry/"' in office.get("/settings/key/?practice=alder").content.decode()


def test_a_name_a_spreadsheet_would_run_is_written_as_text(office, db):
    PracticeFactory(slug="odd", name="=HYPERLINK(1)")
    assert csv_rows(office.get("/registry/console.csv"))[0]["practice"] == "'=HYPERLINK(1)"


def test_who_may_see_it(client, known, office_user):
    staff = member(known["alder"], "sam")
    for path in ["/registry/", "/registry/console.csv"]:
        client.logout()
        anonymous = client.get(path)
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
        client.force_login(staff)
        refused = client.get(path)
        assert refused.status_code == 403
        assert "<html" in refused.content.decode()  # the site's page, not a bare word
        client.force_login(User.objects.create_superuser(f"root-{len(path)}"))
        assert client.get(path).status_code == 200
        client.force_login(office_user)
        assert client.get(path).status_code == 200
    client.force_login(User.objects.get(username="sam"))
    assert 'href="/registry/"' not in client.get("/settings/key/?practice=alder").content.decode()


def test_no_record_is_counted_on_the_page(office, known):
    with CaptureQueriesContext(connection) as queries:
        office.get("/registry/")
    reads = [q["sql"] for q in queries.captured_queries if "registry_record" in q["sql"]]
    assert len(reads) == 1 and "LIMIT 1" in reads[0] and "COUNT" not in reads[0].upper()
    assert Record.objects.count() == 4
