"""The API's limit on failed authentications, per client address (ingestion/api/ratelimit.py).

It is asked only once authentication has failed: a request with a valid key never waits on
it, and is never refused for the failures of others at its address.
"""

from __future__ import annotations

import pytest
from django.test import Client

from ingestion.models import Ingestion
from tests.factories import course
from tests.ingestion.conftest import Api, mint

pytestmark = pytest.mark.django_db

BOGUS = "rgk_" + "x" * 40


@pytest.fixture(autouse=True)
def one_window(monkeypatch):
    """The limiter's clock held still: django-ratelimit's windows are fixed, their edges at a
    second that depends on the address, so a test's few requests could straddle one and
    be counted in two windows (it happened on CI, once in hundreds of runs)."""
    import time
    from types import SimpleNamespace

    now = time.time()
    monkeypatch.setattr("django_ratelimit.core.time", SimpleNamespace(time=lambda: now))


@pytest.fixture
def five_a_minute(settings):
    settings.REGISTRY_AUTH_FAILURE_RATE = "5/m"


def from_address(address: str, token: str, practice, **extra) -> Api:
    return Api(Client(REMOTE_ADDR=address, **extra), token, practice)


def test_a_flood_of_bad_tokens_from_one_address_is_throttled(practice, five_a_minute):
    api = from_address("198.51.100.7", mint(practice), practice)
    for _ in range(5):
        assert api.submit(course("C-1"), token=BOGUS).status_code == 401
    refused = api.submit(course("C-1"), token=BOGUS)
    assert refused.status_code == 429
    assert refused.json()["issue"][0]["code"] == "throttled"
    assert "failed authentications per minute from one address" in refused.content.decode()
    assert int(refused["Retry-After"]) > 0
    assert "WWW-Authenticate" not in refused
    # A missing key counts as a failure too.
    assert api.client.post("/api/registry/fhir/Bundle").status_code == 429


def test_a_valid_key_is_never_refused_for_the_failures_at_its_address(practice, five_a_minute):
    api = from_address("198.51.100.7", mint(practice), practice)
    for _ in range(8):
        api.submit(course("C-1"), token=BOGUS)
    assert api.submit(course("C-1")).status_code == 202
    assert api.receipt(str(Ingestion.objects.get().id)).status_code == 200


def test_other_addresses_are_not_throttled(practice, five_a_minute):
    token = mint(practice)
    flooder = from_address("198.51.100.7", token, practice)
    for _ in range(6):
        flooder.submit(course("C-1"), token=BOGUS)
    assert (
        from_address("203.0.113.20", token, practice).submit(course("C-1"), token=BOGUS).status_code
        == 401
    )


def test_the_limiter_is_not_asked_when_authentication_succeeds(practice, settings):
    """With no failure allowed at all, a valid key still gets through: nothing consulted it
    (before, every request asked the cache first, and this one was refused)."""
    settings.REGISTRY_AUTH_FAILURE_RATE = "0/m"
    api = from_address("198.51.100.7", mint(practice), practice)
    assert api.submit(course("C-1")).status_code == 202
    assert api.submit(course("C-2"), token=BOGUS).status_code == 429


def test_behind_a_trusted_proxy_each_client_is_counted_on_its_own(practice, settings):
    settings.REGISTRY_AUTH_FAILURE_RATE = "5/m"
    settings.REGISTRY_TRUSTED_PROXIES = ["10.0.0.1"]
    token = mint(practice)
    flooder = from_address("10.0.0.1", token, practice, HTTP_X_FORWARDED_FOR="198.51.100.7")
    for _ in range(6):
        flooder.submit(course("C-1"), token=BOGUS)
    assert flooder.submit(course("C-1"), token=BOGUS).status_code == 429
    other = from_address("10.0.0.1", token, practice, HTTP_X_FORWARDED_FOR="203.0.113.20")
    assert other.submit(course("C-1"), token=BOGUS).status_code == 401
    assert other.submit(course("C-1")).status_code == 202


def test_an_untrusted_peer_cannot_spread_its_failures_with_x_forwarded_for(practice, settings):
    settings.REGISTRY_AUTH_FAILURE_RATE = "5/m"
    settings.REGISTRY_TRUSTED_PROXIES = ["10.0.0.1"]
    token = mint(practice)
    answers = [
        from_address("198.51.100.7", token, practice, HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
        .submit(course("C-1"), token=BOGUS)
        .status_code
        for i in range(6)
    ]
    assert answers == [401] * 5 + [429]
