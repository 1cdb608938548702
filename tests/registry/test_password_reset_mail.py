"""Password reset on the real stack: the page publishes to Redis, a real Celery worker sends the
mail through a real SMTP server (aiosmtpd, on a free port), and the link resets the password."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth.models import User
from django.test import Client

from tests.registry.factories import PASSWORD
from tests.services import free_port
from tests.workers import celery_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

NEW_PASSWORD = "a much longer passphrase 42"
LINK = re.compile(r"http://testserver/accounts/reset/[^/\s]+/[^/\s]+/")


class Inbox:
    """aiosmtpd's handler: every message the server accepts, parsed."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
        return "250 Message accepted for delivery"

    def recipients(self) -> list[str]:
        return [str(message["To"]) for message in self.messages]


@contextmanager
def smtp_server() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


@pytest.fixture
def accounts(db) -> dict[str, User]:
    return {
        name: User.objects.create_user(name, email=f"{name}@example.org", password=PASSWORD)
        for name in ["sam", "rita"]
    }


@pytest.fixture
def stack(tmp_path, settings) -> Iterator[tuple[Inbox, Any]]:
    settings.REGISTRY_PASSWORD_RESET = True  # this process serves the pages
    with (
        smtp_server() as (inbox, port),
        celery_worker(
            tmp_path,
            "mail",
            EMAIL_URL=f"smtp://127.0.0.1:{port}",
            DEFAULT_FROM_EMAIL="registry@example.org",
            REGISTRY_RESET_ACCOUNT_RATE="2/h",
        ) as worker,
    ):
        yield inbox, worker


def ask(address: str, email: str) -> int:
    client = Client(REMOTE_ADDR=address)
    return client.post("/accounts/password_reset/", {"email": email}).status_code


def test_the_mail_arrives_through_smtp_and_its_link_works_once(accounts, stack):
    inbox, _ = stack
    assert ask("198.51.100.7", "sam@example.org") == 302
    message = wait_for(lambda: inbox.messages and inbox.messages[0], timeout=60)
    assert message["To"] == "sam@example.org"
    assert message["From"] == "registry@example.org"
    assert message["Subject"] == "Set a new password for the birth registry"
    body = message.get_content()
    [link] = LINK.findall(body)

    client = Client()
    form = client.get(link)
    assert form.status_code == 302
    done = client.post(
        form["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert done["Location"] == "/accounts/reset/done/"
    accounts["sam"].refresh_from_db()
    assert accounts["sam"].check_password(NEW_PASSWORD)
    again = Client().get(link, follow=True)
    assert "Link not valid" in again.content.decode()


def test_an_unknown_address_sends_nothing_and_an_account_gets_at_most_its_share(accounts, stack):
    inbox, worker = stack
    answers = [ask("198.51.100.1", "nobody@example.org")]
    answers += [ask(f"198.51.100.{i}", "sam@example.org") for i in range(2, 5)]
    answers.append(ask("198.51.100.9", "rita@example.org"))  # last in the queue: a marker
    assert answers == [302] * 5
    wait_for(lambda: "rita@example.org" in inbox.recipients(), timeout=60)
    # The worker takes its queue in order: all before the marker is done.
    assert inbox.recipients() == ["sam@example.org", "sam@example.org", "rita@example.org"]
    log = worker.output()
    assert "not sent: too many this hour" in log
    assert "example.org" not in log  # ids only, never an address
