"""The monthly feedback mail through a real SMTP server (aiosmtpd): once per practice and month
however often, and however concurrently, the beat's task runs; opt-outs respected; no registry
figure the rules hide; the preview page and the choice.

The task's function runs in this process (no worker: the claim is a database row, and two
threads are two connections racing for it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
from django.db import connection

from registry.feedback.services import feedback_mails_send
from registry.feedback.tasks import send_feedback_mails
from registry.models import FeedbackMail, Membership, Practice
from tests.registry.conftest import signed_in
from tests.registry.factories import PracticeFactory, member
from tests.registry.test_password_reset_mail import Inbox, smtp_server
from tests.registry.test_scorecard import busy_registry, received, sent
from tests.services import free_port

pytestmark = pytest.mark.django_db(transaction=True)

TODAY = date(2026, 11, 2)
OCTOBER = date(2026, 10, 1)


@pytest.fixture
def inbox(settings) -> Iterator[Inbox]:
    with smtp_server() as (inbox, port):
        mail_to(settings, port)
        yield inbox


def mail_to(settings: Any, port: int) -> None:
    settings.REGISTRY_PASSWORD_RESET = True  # what EMAIL_URL set means
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_TIMEOUT = 5
    settings.DEFAULT_FROM_EMAIL = "registry@example.org"
    settings.REGISTRY_PUBLIC_URL = "https://registry.example.org"


def staff(practice: Practice, name: str, **extra: Any) -> Membership:
    user = member(practice, name)
    user.email = f"{name}@example.org"
    user.save()
    membership = Membership.objects.get(user=user, practice=practice)
    for key, value in extra.items():
        setattr(membership, key, value)
    membership.save()
    return membership


@pytest.fixture
def clinic() -> Practice:
    clinic = PracticeFactory(slug="st-mary", name="St Mary's")
    Practice.objects.filter(pk=clinic.pk).update(created_at=datetime(2026, 1, 1, tzinfo=UTC))
    staff(clinic, "sam")
    staff(clinic, "sue")
    return clinic


def test_sent_once_per_practice_and_month_however_often_the_task_runs(inbox, clinic):
    """Fails if a second run sends anything again."""
    first = feedback_mails_send(today=TODAY)
    assert (first.practices, first.messages) == (1, 2)
    for _ in range(2):
        again = feedback_mails_send(today=TODAY)
        assert (again.practices, again.messages) == (0, 0)
    send_feedback_mails()  # the beat's task, today: its own month, once too
    send_feedback_mails()
    october = [m for m in inbox.messages if "October 2026" in m["Subject"]]
    assert sorted(m["To"] for m in october) == ["sam@example.org", "sue@example.org"]
    claim = FeedbackMail.objects.get(practice=clinic, month=OCTOBER)
    assert (claim.state, claim.recipients) == (FeedbackMail.State.SENT, 2)
    # The next month is a new mail.
    assert feedback_mails_send(today=date(2026, 12, 1)).messages == 2


def test_sent_once_when_two_runs_race(inbox, clinic):
    """Two runs at once, each on its own database connection: one claim wins."""
    for name in ("tom", "una", "vic"):
        staff(clinic, name)
    start = threading.Barrier(2)
    outcomes: list[Any] = []

    def run() -> None:
        try:
            start.wait()
            outcomes.append(feedback_mails_send(today=TODAY))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcome.messages for outcome in outcomes) == [0, 5]
    assert len(inbox.messages) == 5
    assert len({m["To"] for m in inbox.messages}) == 5


def test_only_staff_who_have_not_opted_out_receive_it(inbox, clinic):
    staff(clinic, "otto", feedback_mail=False)
    staff(clinic, "rita", role=Membership.Role.REVIEWER)
    quiet = staff(clinic, "ivy")
    quiet.user.is_active = False
    quiet.user.save()
    staff(clinic, "nomail").user.__class__.objects.filter(username="nomail").update(email="")
    PracticeFactory(slug="sandbox", sandbox=True)  # a sandbox receives none
    staff(Practice.objects.get(slug="sandbox"), "sandy")
    feedback_mails_send(today=TODAY)
    assert sorted(inbox.recipients()) == ["sam@example.org", "sue@example.org"]


def test_the_mail_holds_no_registry_figure_the_rules_hide(inbox, clinic):
    """A thin registry: St Mary's and two others. Its own figures, none of theirs."""
    second, third = PracticeFactory(), PracticeFactory()
    for practice, courses in ((clinic, 17), (second, 23), (third, 31)):
        sent(practice, date(2026, 10, 5), courses, rejected=1)
        received(practice, date(2026, 10, 5), courses)
    feedback_mails_send(today=TODAY)
    body = inbox.messages[0].get_content().replace("\r\n", "\n")
    assert inbox.messages[0]["Subject"] == "Birth registry: your feedback for October 2026"
    assert "Courses received\n  Yours:    17\n  Registry: not shown" in body
    for hidden in ("71", "23", "31", "54"):  # the registry's total, theirs, theirs, both
        assert hidden not in body
    assert "https://registry.example.org/settings/statistics/?practice=st-mary" in body
    assert "sam" not in body.replace("sam@", "")  # no one's name


def test_the_mail_gives_the_registry_where_the_rules_allow(inbox, clinic):
    busy_registry([date(2026, 10, 3)])  # three others of 20 each
    sent(clinic, date(2026, 10, 5), 40, rejected=4)
    feedback_mails_send(today=TODAY)
    body = inbox.messages[0].get_content().replace("\r\n", "\n")
    assert (
        "Rejected\n  Yours:    10.0% (4 of 40)\n  Registry: 16.0% (16 of 100, 4 practices)" in body
    )


def test_a_mail_server_down_claims_nothing_and_the_next_run_sends(settings, clinic):
    mail_to(settings, free_port())  # nothing listens there
    assert feedback_mails_send(today=TODAY).messages == 0
    assert not FeedbackMail.objects.exists()
    with smtp_server() as (inbox, port):
        mail_to(settings, port)
        assert feedback_mails_send(today=TODAY).messages == 2
    assert len(inbox.messages) == 2


def test_without_mail_configured_nothing_is_claimed(settings, clinic):
    settings.REGISTRY_PASSWORD_RESET = False
    assert feedback_mails_send(today=TODAY).practices == 0
    assert not FeedbackMail.objects.exists()


# --- The preview page and the choice -----------------------------------------------------------


def test_preview_and_opt_out(clinic):
    sam = Membership.objects.get(user__username="sam")
    client = signed_in(sam.user)
    page = client.get("/settings/statistics/feedback-mail/?practice=st-mary")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Birth registry: your feedback for" in html
    assert 'id="id_feedback_mail" aria-describedby' not in html  # checked: opted in
    response = client.post("/settings/statistics/feedback-mail/?practice=st-mary", {})
    assert response.status_code == 302
    sam.refresh_from_db()
    assert sam.feedback_mail is False
    client.post("/settings/statistics/feedback-mail/?practice=st-mary", {"feedback_mail": "on"})
    sam.refresh_from_db()
    assert sam.feedback_mail is True


def test_who_sees_the_preview(clinic, superuser):
    reviewer = staff(clinic, "rita", role=Membership.Role.REVIEWER).user
    assert signed_in(reviewer).get("/settings/statistics/feedback-mail/").status_code == 403
    other = member(PracticeFactory(slug="riverside"), "rory")
    url = "/settings/statistics/feedback-mail/?practice=st-mary"
    assert signed_in(other).get(url).status_code == 404
    office = signed_in(superuser)
    assert office.get(url).status_code == 200
    assert office.post(url, {}).status_code == 403  # no membership of theirs to change


def test_each_copy_holds_what_its_reader_may_see(inbox, clinic):
    """Sue is staff of St Mary's and of one of the three others too: subtracting both her
    practices from her copy's registry figures would leave two practices, so her copy shows
    none; Sam's (St Mary's only) shows them."""
    _, (second, *_) = busy_registry([date(2026, 10, 3)])
    sent(clinic, date(2026, 10, 5), 40, rejected=4)
    Membership.objects.create(
        user=Membership.objects.get(user__username="sue").user, practice=second
    )
    feedback_mails_send(today=TODAY)
    bodies = {
        str(m["To"]): m.get_content().replace("\r\n", "\n")
        for m in inbox.messages
        if m["To"] in ("sam@example.org", "sue@example.org") and "St Mary's for" in m.get_content()
    }
    assert "Registry: 16.0% (16 of 100, 4 practices)" in bodies["sam@example.org"]
    assert "16 of 100" not in bodies["sue@example.org"]
    assert (
        "Rejected\n  Yours:    10.0% (4 of 40)\n  Registry: not shown" in bodies["sue@example.org"]
    )
