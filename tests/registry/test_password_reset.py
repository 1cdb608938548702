"""Password reset by mail (registry/signin/): the pages, the link, the throttles, and what the
page publishes. The task runs in the test's process here (locmem mail); through a real SMTP
server and a real worker: test_password_reset_mail.py."""

from __future__ import annotations

import base64
import json
import re

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.core.cache import cache
from django.test import Client

from registry.signin.mail import password_reset_link
from tests.registry.factories import PASSWORD

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a much longer passphrase 42"
LINK = re.compile(r"http://testserver/accounts/reset/[^/\s]+/[^/\s]+/")
RESET_PAGES = [
    "/accounts/password_reset/",
    "/accounts/password_reset/done/",
    "/accounts/reset/MQ/set-password/",
    "/accounts/reset/done/",
]


@pytest.fixture
def mail(settings):
    """Mail configured; the task runs in this process and the mail lands in the outbox."""
    settings.REGISTRY_PASSWORD_RESET = True
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.REGISTRY_PUBLIC_URL = "http://testserver"


@pytest.fixture
def sam(staff):
    staff.email = "sam@example.org"
    staff.save()
    return staff


def ask(address: str, email: str):
    return Client(REMOTE_ADDR=address).post("/accounts/password_reset/", {"email": email})


def link_in(message) -> str:
    found = LINK.findall(message.body)
    assert len(found) == 1, message.body
    return found[0]


def set_password(link: str, password: str = NEW_PASSWORD, client: Client | None = None):
    client = client or Client()
    form = client.get(link)
    if form.status_code != 302:
        return form
    return client.post(form["Location"], {"new_password1": password, "new_password2": password})


# -- Without mail --------------------------------------------------------------------------


@pytest.mark.parametrize("url", RESET_PAGES)
def test_without_mail_the_reset_pages_are_404_saying_to_ask_an_administrator(url, client):
    response = client.get(url)
    assert response.status_code == 404
    html = response.content.decode()
    assert "Ask a registry administrator to set a new password" in html
    assert 'class="site-header"' in html


def test_without_mail_the_sign_in_page_says_to_ask_an_administrator(client):
    html = client.get("/accounts/login/").content.decode()
    assert "Ask a registry administrator to set a new one" in html
    assert "/accounts/password_reset/" not in html


def test_with_mail_the_sign_in_page_offers_the_reset(client, mail):
    html = client.get("/accounts/login/").content.decode()
    assert 'href="/accounts/password_reset/"' in html


# -- The mail and its link -----------------------------------------------------------------


def test_a_known_address_gets_a_mail_whose_link_works_once(sam, mail, mailoutbox):
    response = ask("198.51.100.7", "Sam@Example.org")
    assert response.status_code == 302 and response["Location"] == "/accounts/password_reset/done/"
    assert len(mailoutbox) == 1
    message = mailoutbox[0]
    assert message.to == ["sam@example.org"]
    assert message.subject == "Set a new password for the birth registry"
    assert '"sam"' in message.body and "within 60 minutes" in message.body
    link = link_in(message)

    done = set_password(link)
    assert done.status_code == 302 and done["Location"] == "/accounts/reset/done/"
    sam.refresh_from_db()
    assert sam.check_password(NEW_PASSWORD)
    signed_in = Client().post("/accounts/login/", {"username": "sam", "password": NEW_PASSWORD})
    assert signed_in.status_code == 302

    again = set_password(link, "yet another passphrase 43")
    assert again.status_code == 200 and "Link not valid" in again.content.decode()
    sam.refresh_from_db()
    assert sam.check_password(NEW_PASSWORD)


def test_an_unknown_address_gets_the_same_answer_and_no_mail(sam, mail, mailoutbox):
    known = ask("198.51.100.7", "sam@example.org")
    unknown = ask("198.51.100.8", "nobody@example.org")
    assert (unknown.status_code, unknown["Location"]) == (known.status_code, known["Location"])
    assert len(mailoutbox) == 1


def test_no_mail_for_an_inactive_account_or_one_without_a_password(sam, mail, mailoutbox):
    User.objects.create_user("gone", email="gone@example.org", password=PASSWORD, is_active=False)
    User.objects.create_user("keyless", email="keyless@example.org")  # no usable password
    assert ask("198.51.100.7", "gone@example.org").status_code == 302
    assert ask("198.51.100.8", "keyless@example.org").status_code == 302
    assert mailoutbox == []


def test_a_link_older_than_an_hour_no_longer_works(sam, mail, settings):
    assert settings.PASSWORD_RESET_TIMEOUT == 3600
    generator = default_token_generator
    an_hour_ago = generator._num_seconds(generator._now()) - 3601
    token = generator._make_token_with_timestamp(sam, an_hour_ago, generator.secret)
    link = password_reset_link(user_id=sam.pk, token=token)
    response = set_password(link)
    assert response.status_code == 200 and "Link not valid" in response.content.decode()


def test_setting_the_password_lifts_the_lock_out_at_that_address(sam, mail, mailoutbox, settings):
    here = "198.51.100.7"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        Client(REMOTE_ADDR=here).post("/accounts/login/", {"username": "sam", "password": "x"})
    ask(here, "sam@example.org")
    set_password(link_in(mailoutbox[0]), client=Client(REMOTE_ADDR=here))
    signed_in = Client(REMOTE_ADDR=here)
    response = signed_in.post("/accounts/login/", {"username": "sam", "password": NEW_PASSWORD})
    assert response.status_code == 302


# -- Throttles -----------------------------------------------------------------------------


def test_requests_are_throttled_per_client_address(sam, mail, mailoutbox, settings):
    settings.REGISTRY_RESET_ADDRESS_RATE = "3/15m"
    answers = [ask("198.51.100.7", f"someone-{i}@example.org").status_code for i in range(3)]
    assert answers == [302, 302, 302]
    refused = ask("198.51.100.7", "sam@example.org")
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 15 * 60
    assert "Too many reset requests" in refused.content.decode()
    assert mailoutbox == []
    assert ask("198.51.100.8", "sam@example.org").status_code == 302
    assert len(mailoutbox) == 1


def test_mails_are_throttled_per_account_and_the_page_never_says(sam, mail, mailoutbox, settings):
    settings.REGISTRY_RESET_ACCOUNT_RATE = "2/h"
    answers = [ask(f"198.51.100.{i}", "sam@example.org").status_code for i in range(4)]
    assert answers == [302] * 4
    assert len(mailoutbox) == 2


# -- What the page publishes ---------------------------------------------------------------


def published_reset_tasks() -> list[dict]:
    """Take the reset tasks waiting in the broker's queue (Redis), as Celery wrote them."""
    broker = cache._cache.get_client(write=True)  # the same Redis database as the broker
    found = []
    for raw in broker.lrange("celery", 0, -1):
        message = json.loads(raw)
        if message["headers"]["task"] == "registry.tasks.send_password_reset":
            broker.lrem("celery", 1, raw)
            found.append(message)
    return found


def test_the_page_publishes_ids_never_the_address_or_the_link(sam, settings):
    settings.REGISTRY_PASSWORD_RESET = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    published_reset_tasks()
    ask("198.51.100.7", "sam@example.org")
    ask("198.51.100.8", "nobody@example.org")
    messages = published_reset_tasks()
    assert len(messages) == 2  # one for an unknown address too: the same work either way
    bodies = [base64.b64decode(m["body"]).decode() for m in messages]
    assert all(json.loads(body)[0] == [] for body in bodies)  # keyword arguments only
    args = sorted((json.loads(body)[1] for body in bodies), key=lambda kw: kw["user_ids"])
    # The ids, and who asked as a keyed hash of their address (their own reset budget).
    assert [(kw["user_ids"], sorted(kw)) for kw in args] == [
        ([], ["requester", "user_ids"]),
        ([sam.pk], ["requester", "user_ids"]),
    ]
    assert args[0]["requester"] != args[1]["requester"]
    raw = json.dumps(messages)
    assert "example.org" not in raw and "reset/" not in raw and "198.51.100" not in raw


# -- The pages -----------------------------------------------------------------------------


def test_the_reset_pages_are_in_the_sites_look(sam, mail, mailoutbox, client):
    for url in RESET_PAGES[:2] + RESET_PAGES[3:]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert 'class="site-header"' in response.content.decode()
    form = client.get("/accounts/password_reset/").content.decode()
    assert '<label for="id_email">Email address</label>' in form
    assert 'aria-describedby="id_email_helptext"' in form


def test_a_bad_address_is_a_400_with_its_error_tied_to_the_field(mail):
    response = ask("198.51.100.7", "not an address")
    assert response.status_code == 400
    html = response.content.decode()
    assert 'role="alert"' in html
    assert 'aria-invalid="true"' in html
    assert 'aria-describedby="id_email_helptext id_email_error"' in html
    assert 'id="id_email_error"' in html
    assert "<title>Error: Reset your password" in html


def test_a_refused_new_password_is_explained_beside_its_field(sam, mail, mailoutbox):
    ask("198.51.100.7", "sam@example.org")
    client = Client()
    form = client.get(link_in(mailoutbox[0]))
    response = client.post(form["Location"], {"new_password1": "abc", "new_password2": "abd"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="id_new_password2_error"' in html
    assert re.search(r'id="id_new_password2"[^>]*aria-invalid="true"', html) or re.search(
        r'aria-invalid="true"[^>]*id="id_new_password2"', html
    )
    sam.refresh_from_db()
    assert sam.check_password(PASSWORD)
