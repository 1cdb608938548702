"""Real clients against a live server: the pytest-django live server and a real Celery worker.

The live server runs in a thread of the test process; the worker is a separate process on the
same test database and Redis (tests/workers.py). Both see only committed rows, hence
``transaction=True`` on every test here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.conftest import clear_cached_keys
from tests.ingestion.conftest import mint
from tests.workers import Worker, celery_worker

pytestmark = pytest.mark.worker


@pytest.fixture(scope="module")
def worker(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Worker]:
    with django_db_blocker.unblock(), celery_worker(tmp_path_factory.mktemp("w"), "clients") as w:
        yield w


@dataclass
class Server:
    base: str  # the FHIR base, no trailing slash
    token: str


@pytest.fixture
def server(worker, live_server, transactional_db, settings) -> Server:
    from registry.models import Practice

    settings.REGISTRY_POLL_RETRY_AFTER_SECONDS = 1
    practice = Practice.objects.create(slug="st-mary", name="St Mary's")
    return Server(f"{live_server.url}/api/registry/fhir", mint(practice))


def let_the_rate_limit_window_pass(seconds: float) -> None:
    """A ``sleep`` for the client under test: what waiting out Retry-After achieves (fresh
    rate-limit counters), without the wait."""
    clear_cached_keys()
