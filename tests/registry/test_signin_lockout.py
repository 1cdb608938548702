"""Sign-in lock-outs (registry/signin/lockout.py): the (username, address) pair, and the
address across usernames with a higher limit. Wrong passwords from one address never lock a
person out from another."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.test import Client

from registry.signin.lockout import human_duration
from tests.registry.factories import PASSWORD

pytestmark = pytest.mark.django_db

SIGN_IN_PAGES = ["/accounts/login/", "/admin/login/"]
ATTACKER = "198.51.100.7"
ELSEWHERE = "203.0.113.20"


def sign_in(address: str, username: str, password: str, url: str = "/accounts/login/", **extra):
    client = Client(REMOTE_ADDR=address, **extra)
    response = client.post(url, {"username": username, "password": password})
    response.signed_in = "_auth_user_id" in client.session
    return response


def fail(times: int, address: str, username: str, url: str = "/accounts/login/", **extra):
    return [sign_in(address, username, "wrong", url, **extra).status_code for _ in range(times)]


@pytest.fixture
def root(superuser):
    return superuser


@pytest.mark.parametrize("url", SIGN_IN_PAGES)
def test_wrong_passwords_lock_the_pair_and_never_the_account(url, root, settings):
    limit = settings.AXES_FAILURE_LIMIT
    assert fail(limit, ATTACKER, "root", url) == [200] * (limit - 1) + [429]
    locked = sign_in(ATTACKER, "root", PASSWORD, url)
    assert locked.status_code == 429 and not locked.signed_in
    # The right person, elsewhere, is not locked out by the failures of another.
    elsewhere = sign_in(ELSEWHERE, "root", PASSWORD, url)
    assert elsewhere.status_code == 302 and elsewhere.signed_in


def test_a_locked_pair_leaves_the_address_free_for_other_accounts(staff, root, settings):
    fail(settings.AXES_FAILURE_LIMIT, ATTACKER, "root")
    assert sign_in(ATTACKER, "root", PASSWORD).status_code == 429
    assert sign_in(ATTACKER, "sam", PASSWORD).signed_in


def test_an_address_failing_across_usernames_is_locked_for_all(staff, settings):
    settings.REGISTRY_SIGN_IN_ADDRESS_LIMIT = 12
    for i in range(11):  # each username below its own limit
        assert sign_in(ATTACKER, f"nobody-{i % 3}", "wrong").status_code == 200
    assert sign_in(ATTACKER, "sam", PASSWORD).signed_in  # 11 failures: still open
    assert sign_in(ATTACKER, "nobody-9", "wrong").status_code == 429  # the 12th locks
    refused = sign_in(ATTACKER, "sam", PASSWORD)
    assert refused.status_code == 429 and not refused.signed_in
    assert sign_in(ELSEWHERE, "sam", PASSWORD).signed_in


def test_the_address_limit_is_higher_than_the_pairs_by_default(settings):
    assert settings.REGISTRY_SIGN_IN_ADDRESS_LIMIT == 20
    assert settings.REGISTRY_SIGN_IN_ADDRESS_LIMIT > settings.AXES_FAILURE_LIMIT


def test_behind_a_trusted_proxy_each_client_is_counted_on_its_own(root, settings):
    settings.REGISTRY_TRUSTED_PROXIES = ["10.0.0.1"]
    via_proxy = {"HTTP_X_FORWARDED_FOR": ATTACKER}
    fail(settings.AXES_FAILURE_LIMIT, "10.0.0.1", "root", **via_proxy)
    assert sign_in("10.0.0.1", "root", PASSWORD, **via_proxy).status_code == 429
    # Another client behind the same proxy signs in.
    other = sign_in("10.0.0.1", "root", PASSWORD, HTTP_X_FORWARDED_FOR=ELSEWHERE)
    assert other.signed_in
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {ATTACKER}


def test_an_untrusted_peer_cannot_escape_its_lock_with_x_forwarded_for(root, settings):
    settings.REGISTRY_TRUSTED_PROXIES = ["10.0.0.1"]
    for i in range(settings.AXES_FAILURE_LIMIT):
        sign_in(ATTACKER, "root", "wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
    forged = sign_in(ATTACKER, "root", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.200")
    assert forged.status_code == 429 and not forged.signed_in


def test_the_lockout_page_is_in_the_sites_look_and_says_what_to_do(root, settings):
    locked = fail(settings.AXES_FAILURE_LIMIT, ATTACKER, "root")[-1]
    assert locked == 429
    page = sign_in(ATTACKER, "root", PASSWORD)
    html = page.content.decode()
    assert "<h1>Signing in is paused</h1>" in html and 'class="site-header"' in html
    assert "Too many attempts. Try again in 15 minutes." in html
    assert "manage.py" not in html and "axes_reset" not in html  # operators: docs/operations.md
    assert "Signing in from another place is not affected" in html
    assert "ask a registry administrator" in html


def test_a_right_password_under_the_limit_signs_in_and_clears_the_pair(staff, settings):
    fail(settings.AXES_FAILURE_LIMIT - 1, ATTACKER, "sam")
    assert sign_in(ATTACKER, "sam", PASSWORD).signed_in
    assert fail(settings.AXES_FAILURE_LIMIT - 1, ATTACKER, "sam")[-1] == 200


def test_administrators_lift_a_lock_with_the_axes_commands(root, settings):
    fail(settings.AXES_FAILURE_LIMIT, ATTACKER, "root")
    call_command("axes_reset_username", "root")
    assert sign_in(ATTACKER, "root", PASSWORD).signed_in
    settings.REGISTRY_SIGN_IN_ADDRESS_LIMIT = 6
    fail(6, ATTACKER, "nobody")
    assert sign_in(ATTACKER, "root", PASSWORD).status_code == 429
    call_command("axes_reset_ip", ATTACKER)
    assert sign_in(ATTACKER, "root", PASSWORD).signed_in


@pytest.mark.parametrize(
    ("minutes", "words"),
    [
        (1, "1 minute"),
        (15, "15 minutes"),
        (60, "1 hour"),
        (90, "1 hour 30 minutes"),
        (120, "2 hours"),
    ],
)
def test_the_wait_is_said_in_words(minutes, words):
    assert human_duration(minutes) == words
