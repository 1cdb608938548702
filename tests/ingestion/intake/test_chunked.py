"""``Transfer-Encoding: chunked`` bodies (no Content-Length), sent to a real gunicorn."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from urllib.parse import urlsplit

import orjson
import pytest

from ingestion.models import Ingestion
from tests import workers
from tests.factories import batch, course
from tests.ingestion.conftest import mint
from tests.services import Stack

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

LIMIT = 200_000


def post_chunked(url: str, token: str, body: bytes, piece: int = 8192) -> tuple[int, dict]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    pieces = (body[i : i + piece] for i in range(0, len(body), piece))
    try:
        connection.request(
            "POST",
            "/api/registry/fhir/Bundle",
            body=pieces,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"},
            encode_chunked=True,
        )
        response = connection.getresponse()
        return response.status, orjson.loads(response.read())
    finally:
        connection.close()


@pytest.fixture(scope="module")
def web_url(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[str]:
    """One gunicorn for the module: each test posts on a connection of its own, and starting
    and stopping gunicorn cost several seconds a test."""
    with django_db_blocker.unblock():
        env = workers.worker_environment(REGISTRY_MAX_BODY_BYTES=str(LIMIT))
    with Stack(env, tmp_path_factory.mktemp("chunked")).web() as web:
        yield web.url


@pytest.fixture
def server(web_url, transactional_db) -> tuple[str, str]:
    """The shared server, and a key of this test's own practice."""
    from registry.models import Practice

    return web_url, mint(Practice.objects.create(slug="st-mary"))


def test_a_chunked_course_is_accepted(server):
    url, token = server
    status, body = post_chunked(url, token, orjson.dumps(course("C-1")))
    assert status == 202, body
    assert Ingestion.objects.get().entry_count > 0


def test_a_chunked_batch_under_the_limit_is_accepted_whole(server):
    url, token = server
    payload = orjson.dumps(batch(*(course(f"C-{i}") for i in range(20))))
    assert len(payload) < LIMIT
    status, body = post_chunked(url, token, payload, piece=1000)
    assert status == 202, body
    assert Ingestion.objects.get().entry_count == 20


def test_a_chunked_body_past_the_limit_is_413(server):
    url, token = server
    payload = orjson.dumps(batch(*(course(f"C-{i}") for i in range(150))))
    assert len(payload) > LIMIT
    status, body = post_chunked(url, token, payload)
    assert status == 413
    assert body["issue"][0]["code"] == "too-costly"
    assert not Ingestion.objects.exists()
