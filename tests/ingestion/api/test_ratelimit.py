"""120 requests per minute per key and endpoint, in the shared Redis cache (spec 8)."""

from __future__ import annotations

import secrets
import string
import time
import uuid
from types import SimpleNamespace

import pytest
from django.test import Client, override_settings

from ingestion.models import Ingestion
from keys.models import PREFIX_RANDOM_LENGTH, TOKEN_RANDOM_LENGTH, ApiKey, token_prefix
from tests.factories import course
from tests.ingestion.conftest import Api, ingestion_id_of, mint
from tests.ingestion.intake.test_submit import assert_outcome
from tests.ingestion.monitoring.test_health_shared import UNREACHABLE_REDIS

pytestmark = pytest.mark.django_db


def spend(api, count):
    """Use up ``count`` requests cheaply: 415s are counted like any other request."""
    for _ in range(count):
        assert api.submit(b"{}", content_type="text/plain").status_code == 415


def test_the_121st_request_in_a_minute_is_429_with_retry_after(api):
    spend(api, 120)
    response = api.submit(course("C-1"))
    assert_outcome(response, 429, "throttled")
    assert 1 <= int(response["Retry-After"]) <= 60
    assert not Ingestion.objects.exists()


def test_the_limit_is_per_endpoint(api):
    spend(api, 120)
    assert api.receipt("00000000-0000-0000-0000-000000000000").status_code == 404


def test_the_status_endpoint_has_its_own_limit(api):
    for _ in range(120):
        assert api.receipt("unknown").status_code == 404
    response = api.receipt("unknown")
    assert_outcome(response, 429, "throttled")
    assert "Retry-After" in response


def test_the_limit_is_per_key(api, other_api):
    spend(api, 120)
    assert api.submit(course("C-1")).status_code == 429
    assert other_api.submit(course("C-1")).status_code == 202


def test_the_counter_lives_in_redis(api):
    from django.core.cache import cache

    spend(api, 3)
    counters = [key for key in cache._cache.get_client().keys("*") if b"rl:" in key]
    assert counters, "the rate-limit counter should be in Redis, shared by every web process"


@override_settings(CACHES=UNREACHABLE_REDIS)
def test_with_redis_unreachable_submissions_are_still_accepted(api, caplog):
    response = api.submit(course("C-1"))
    assert response.status_code == 202
    assert Ingestion.objects.count() == 1
    assert "failing open" in caplog.text


# -- A limit is spent only by its owner --------------------------------------------------

ATTACKER, VICTIM = "198.51.100.66", "203.0.113.7"
SECRET_LENGTH = TOKEN_RANDOM_LENGTH - PREFIX_RANDOM_LENGTH


def forged(token: str) -> str:
    """The key's (public) prefix and a made-up secret part."""
    secret = (secrets.choice(string.ascii_letters) for _ in range(SECRET_LENGTH))
    return token_prefix(token) + "".join(secret)


@pytest.fixture
def one_window(monkeypatch):
    """The limiters' clocks held still, so that every request of a test falls in one window
    and a forgery counted on the key's counter would still be there for the victim."""
    now = time.time()
    clock = SimpleNamespace(time=lambda: now)
    monkeypatch.setattr("ingestion.api.ratelimit.time", clock)
    monkeypatch.setattr("django_ratelimit.core.time", clock)


def send(api: Api, endpoint: str, token: str):
    if endpoint == "receipt":
        return api.receipt(str(uuid.uuid4()), token=token)
    return getattr(api, endpoint)(course("C-9"), token=token)


def forge(attacker: Api, count: int, *, endpoints=("submit", "receipt", "validate")) -> None:
    """``count`` forged tokens of the attacker's key's prefix to each endpoint."""
    for _ in range(count):
        for endpoint in endpoints:
            answer = send(attacker, endpoint, forged(attacker.token))
            assert answer.status_code in (401, 429)  # 429: the attacker's address, throttled


def test_forged_tokens_with_a_keys_prefix_spend_none_of_its_limit(practice, one_window):
    """Issue 31: 122 tokens of a practice's prefix and a random secret kept its key at 429.
    Only a verified token counts against the key; the forgeries count against the address
    they came from, and leave the key's "last used" alone."""
    token = mint(practice)
    forge(Api(Client(REMOTE_ADDR=ATTACKER), token, practice), 130)
    assert ApiKey.objects.get().last_used_at is None  # no forgery wrote it
    victim = Api(Client(REMOTE_ADDR=VICTIM), token, practice)
    submitted = victim.submit(course("C-1"))
    assert submitted.status_code == 202
    assert victim.receipt(ingestion_id_of(submitted)).status_code == 200
    assert victim.validate(course("C-2")).status_code == 200
    assert ApiKey.objects.get().last_used_at is not None  # and the first verified use did


def test_without_the_key_cache_forgeries_spend_none_of_the_limit_either(
    practice, one_window, settings
):
    settings.REGISTRY_KEY_CACHE_SECONDS = 0
    token = mint(practice)
    forge(Api(Client(REMOTE_ADDR=ATTACKER), token, practice), 125, endpoints=("submit",))
    victim = Api(Client(REMOTE_ADDR=VICTIM), token, practice)
    assert victim.submit(course("C-1")).status_code == 202
    assert ApiKey.objects.get().last_used_at is not None


def test_the_owner_still_spends_its_own_limit_after_forgeries(practice, one_window):
    token = mint(practice)
    forge(Api(Client(REMOTE_ADDR=ATTACKER), token, practice), 5, endpoints=("submit",))
    victim = Api(Client(REMOTE_ADDR=VICTIM), token, practice)
    spend(victim, 120)
    assert_outcome(victim.submit(course("C-1")), 429, "throttled")


@override_settings(REGISTRY_RATE_LIMIT="3/h")
def test_the_429_names_the_configured_limit(api):
    spend(api, 3)
    response = api.submit(course("C-1"))
    assert_outcome(response, 429, "throttled")
    diagnostics = response.json()["issue"][0]["diagnostics"]
    assert "at most 3 requests per hour per key for this endpoint" in diagnostics
    assert "120" not in diagnostics
