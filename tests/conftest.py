"""Shared fixtures. The suite runs on real PostgreSQL and Redis (see the Makefile)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from types import ModuleType

import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

# What starts a process: a test module holding one of these (or a test marked worker or browser)
# starts a Celery worker, gunicorn, nginx, Chromium, promtool, a private PostgreSQL or Redis,
# or a command. Its tests are marked "process"; make test-fast runs the others.
PROCESS_STARTERS = (
    "subprocess",
    "multiprocessing",
    "playwright",
    "tests.workers",
    "tests.services",
    "tests.browser",
    "tests.crashing_worker",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "process: starts a process (make test-fast leaves it out)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marked = item.get_closest_marker("worker") or item.get_closest_marker("browser")
        if marked or _starts_processes(getattr(item, "module", None)):
            item.add_marker(pytest.mark.process)


@functools.cache
def _starts_processes(module: ModuleType | None) -> bool:
    """Whether the module holds a process starter (a module, or a name taken from one)."""
    for value in vars(module).values() if module else ():
        is_module = isinstance(value, ModuleType)
        origin = value.__name__ if is_module else getattr(value, "__module__", "")
        if isinstance(origin, str) and origin.startswith(PROCESS_STARTERS):
            return True
    return False


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix) -> None:
    """The tests' own connections commit without waiting for the WAL's flush, as the processes
    the tests start do (tests/workers.py NO_COMMIT_WAIT): a transactional test commits each
    row it writes."""
    from tests.workers import NO_COMMIT_WAIT

    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("postgresql"):
        options = database.setdefault("OPTIONS", {})
        options["options"] = f"{options.get('options', '')} {NO_COMMIT_WAIT}".strip()


@pytest.fixture(scope="session", autouse=True)
def _static_files_collected() -> None:
    """Pages name hashed static files from collectstatic's manifest, as in production; a fresh
    clone collects them once (lib.static decides when they are stale)."""
    from django.core.management import call_command

    from lib.static import static_files_stale

    if static_files_stale():
        call_command("collectstatic", interactive=False, verbosity=0)


@pytest.fixture(scope="session", autouse=True)
def _shared_chromium_stopped() -> Iterator[None]:
    """The session's Chromium and Playwright driver (tests/browser.py), stopped at its end if
    a browser test started them."""
    yield
    from tests.browser import SHARED

    SHARED.stop()


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
    later (ingestion/messaging/gathering.py): tests look in the broker right after a submission. The
    window has tests of its own (tests/ingestion/messaging/test_gathering.py); the web and worker
    processes that tests start keep the default."""
    settings.REGISTRY_SINGLES_GATHER_SECONDS = 0
