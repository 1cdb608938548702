"""Shared fixtures. The suite runs on real PostgreSQL and Redis (see the Makefile)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache


@pytest.fixture(scope="session", autouse=True)
def _static_files_collected() -> None:
    """Pages name hashed static files from collectstatic's manifest, as in production; a fresh
    clone collects them once (lib.static decides when they are stale)."""
    from django.core.management import call_command

    from lib.static import static_files_stale

    if static_files_stale():
        call_command("collectstatic", interactive=False, verbosity=0)


class _HeldClock:
    """The rate limiter's clock, held at one moment: ``time()`` and nothing else."""

    def __init__(self, moment: float) -> None:
        self.moment = moment

    def time(self) -> float:
        return self.moment


@pytest.fixture(autouse=True)
def _rate_limit_window_held(monkeypatch) -> None:
    """The API's rate limit counts in fixed one-minute windows of the wall clock
    (ingestion/api/ratelimit.py). A test that spends the limit and expects the next request
    refused would pass or fail by whether its requests crossed a minute's boundary (seen in
    CI: 120 requests at 00:33:59.9); within a test, the limiter's window does not roll."""
    import time

    from ingestion.api import ratelimit

    monkeypatch.setattr(ratelimit, "time", _HeldClock(time.time()))


@pytest.fixture(scope="session")
def live_server(request, _static_files_collected):
    """pytest-django's live server, with static files served as in production: by WhiteNoise
    (lib.static) from the collected, hashed files, not by Django's handler for the apps'."""
    from pytest_django.live_server_helper import LiveServer

    address = request.config.getvalue("liveserver") or "localhost"
    server = LiveServer(address, start=False)
    server.thread.static_handler = _as_it_is
    server.start()
    yield server
    server.stop()


def _as_it_is(handler):
    return handler


@pytest.fixture(autouse=True)
def _clean_cache() -> None:
    """Each test starts without cached keys (rate-limit counters)."""
    clear_cached_keys()


def clear_cached_keys() -> None:
    """Remove the cache's keys, and only those: the Celery broker shares the Redis database,
    so FLUSHDB would drop queued tasks."""
    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        cache.clear()
        return
    client = cache._cache.get_client(write=True)
    prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture
def practice(db):
    from registry.models import Practice

    return Practice.objects.create(slug="st-mary", name="St Mary's")


@pytest.fixture
def other_practice(db):
    from registry.models import Practice

    return Practice.objects.create(slug="riverside", name="Riverside")


@pytest.fixture(autouse=True)
def _fresh_breakers_and_health() -> None:
    """Each test starts with the Redis breakers closed and no /healthz verdict kept."""
    from config.health import verdict
    from lib.breaker import broker_breaker, cache_breaker

    cache_breaker.close()
    broker_breaker.close()
    verdict.checks, verdict.taken_at = None, 0.0


@pytest.fixture(autouse=True)
def _singles_published_at_once(settings) -> None:
    """In this process a single's message is published at its commit, not a gathering window
    later (ingestion/gathering.py): tests look in the broker right after a submission. The
    window has tests of its own (tests/ingestion/messaging/test_gathering.py); the web and worker
    processes that tests start keep the default."""
    settings.REGISTRY_SINGLES_GATHER_SECONDS = 0
