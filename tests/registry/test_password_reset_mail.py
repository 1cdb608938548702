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


@contextmanager
def mail_stack(tmp_path, settings, **worker_settings: str) -> Iterator[tuple[Inbox, Any]]:
    settings.REGISTRY_PASSWORD_RESET = True  # this process serves the pages
    with (
        smtp_server() as (inbox, port),
        celery_worker(
            tmp_path,
            "mail",
            EMAIL_URL=f"smtp://127.0.0.1:{port}",
            DEFAULT_FROM_EMAIL="registry@example.org",
            REGISTRY_PUBLIC_URL="http://testserver",
            **worker_settings,
        ) as worker,
    ):
        yield inbox, worker


@pytest.fixture
def stack(tmp_path, settings) -> Iterator[tuple[Inbox, Any]]:
    with mail_stack(tmp_path, settings, REGISTRY_RESET_ACCOUNT_RATE="2/h") as stack:
        yield stack


@pytest.fixture
def default_stack(tmp_path, settings) -> Iterator[tuple[Inbox, Any]]:
    """The budgets as shipped: per account and requesting address, and the backstop."""
    with mail_stack(tmp_path, settings) as stack:
        yield stack


def ask(address: str, email: str, **headers: str) -> int:
    client = Client(REMOTE_ADDR=address, **headers)
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


def test_a_stranger_cannot_spend_the_owners_reset_mails(accounts, default_stack):
    inbox, worker = default_stack
    stranger, owner = "203.0.113.66", "198.51.100.7"
    assert [ask(stranger, "sam@example.org") for _ in range(4)] == [302] * 4
    assert ask(owner, "sam@example.org") == 302
    assert ask("198.51.100.9", "rita@example.org") == 302  # last in the queue: a marker
    wait_for(lambda: "rita@example.org" in inbox.recipients(), timeout=60)
    # The stranger's budget for sam (3 an hour) is theirs alone: the owner's ask still sends.
    assert inbox.recipients() == ["sam@example.org"] * 4 + ["rita@example.org"]
    assert "not sent: too many this hour" in worker.output()


def test_the_link_names_the_configured_site_whatever_host_the_request_gave(
    accounts, stack, settings
):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "registry.test"]
    inbox, _ = stack
    assert ask("198.51.100.7", "sam@example.org", HTTP_HOST="registry.test:9999") == 302
    message = wait_for(lambda: inbox.messages and inbox.messages[0], timeout=60)
    body = message.get_content()
    assert "9999" not in body and "registry.test" not in body
    assert len(LINK.findall(body)) == 1
