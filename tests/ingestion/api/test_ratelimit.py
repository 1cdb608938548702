"""120 requests per minute per key and endpoint, in the shared Redis cache (spec 8)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from ingestion.models import Ingestion
from tests.factories import course
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
