"""Slow and hostile clients against the real server, as ``make run`` starts it (config/front.py).

Connections that dribble their headers or their body wait as coroutines, not threads: a
well-behaved client is answered meanwhile. Headers and bodies have read timeouts, and a body
past the limit is refused however it is framed.
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from urllib.parse import urlsplit

import pytest

from tests import workers
from tests.ingestion.conftest import mint
from tests.services import Stack

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

HEADER_TIMEOUT = 2
BODY_IDLE = 2
SLOW_CONNECTIONS = 64


def _environment(header_timeout: float, body_idle: float) -> dict[str, str]:
    return workers.worker_environment(
        REGISTRY_HEADER_TIMEOUT_SECONDS=str(header_timeout),
        REGISTRY_BODY_IDLE_SECONDS=str(body_idle),
        REGISTRY_MAX_BODY_BYTES="100000",
    )


@contextmanager
def serving(
    tmp_path, header_timeout: float, body_idle: float = BODY_IDLE
) -> Iterator[tuple[str, int, str]]:
    from registry.models import Practice

    token = mint(Practice.objects.create(slug="st-mary"))
    with Stack(_environment(header_timeout, body_idle), tmp_path).web() as web:
        parts = urlsplit(web.url)
        yield str(parts.hostname), int(parts.port or 80), token


@pytest.fixture(scope="module")
def front(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[tuple[str, int]]:
    """One server for the tests of the default timeouts: each connects afresh and reads its
    own answer, and starting and stopping gunicorn cost several seconds a test."""
    with django_db_blocker.unblock():
        env = _environment(HEADER_TIMEOUT, BODY_IDLE)
    with Stack(env, tmp_path_factory.mktemp("front")).web() as web:
        parts = urlsplit(web.url)
        yield str(parts.hostname), int(parts.port or 80)


@pytest.fixture
def server(front, transactional_db) -> tuple[str, int, str]:
    """The shared server, and a key of this test's own practice."""
    from registry.models import Practice

    return (*front, mint(Practice.objects.create(slug="st-mary")))


def _open(host: str, port: int, start: bytes) -> socket.socket:
    connection = socket.create_connection((host, port), timeout=10)
    connection.sendall(start)
    return connection


def _healthz(host: str, port: int) -> int:
    connection = http.client.HTTPConnection(host, port, timeout=60)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status
    finally:
        connection.close()


def _still_open(connection: socket.socket) -> bool:
    connection.setblocking(False)
    try:
        connection.recv(1)  # an answer, or b"" when closed: either way not held open
        return False
    except BlockingIOError:
        return True  # nothing to read, not closed: still waiting for its request


def _post_start(token: str, length: int) -> bytes:
    return (
        b"POST /api/registry/fhir/Bundle HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/fhir+json\r\nContent-Length: " + str(length).encode() + b"\r\n"
        b"Authorization: Bearer " + token.encode() + b"\r\n\r\n"
    )


def test_64_slow_connections_do_not_keep_others_waiting(tmp_path):
    """The threaded server this replaced held a thread per slow connection (8 in all): this
    client then waited for as long as the slow ones kept sending."""
    held = serving(tmp_path, header_timeout=600, body_idle=600)
    with held as (host, port, token), ExitStack() as stack:
        slow = []
        for i in range(SLOW_CONNECTIONS):
            start = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" if i % 8 else _post_start(token, 10_000)
            slow.append(_open(host, port, start))
            stack.callback(slow[-1].close)
        answers = [_healthz(host, port) for _ in range(5)]
        assert answers == [200] * 5
        assert all(_still_open(connection) for connection in slow)


def test_headers_not_complete_in_time_close_the_connection(server):
    host, port, _ = server
    connection = _open(host, port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    connection.settimeout(HEADER_TIMEOUT * 10)
    assert connection.recv(100) == b""  # closed by the server, with nothing served


def test_a_body_that_stops_coming_is_408_with_an_operation_outcome(server):
    host, port, token = server
    connection = _open(host, port, _post_start(token, 1000) + b'{"resourceType"')
    connection.settimeout(BODY_IDLE * 10)
    answer = connection.recv(65536)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert b'"code": "timeout"' in body
    assert b"OperationOutcome" in body


def test_a_declared_body_past_the_limit_is_413_before_it_is_read(server):
    host, port, token = server
    connection = _open(host, port, _post_start(token, 10_000_000) + b"x" * 200_000)
    connection.settimeout(30)
    answer = connection.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413")
    assert b'"code": "too-costly"' in answer and b"OperationOutcome" in answer


# --- Absolute-form request targets (RFC 9112 section 3.2.2) ------------------------------------


def _exchange(host: str, port: int, request: bytes) -> bytes:
    connection = _open(host, port, request)
    connection.settimeout(30)
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
    connection.close()
    return answer


def test_an_absolute_form_target_is_served_as_its_path_and_query(server):
    host, port, _ = server
    for target in (f"http://{host}:{port}/healthz", f"HTTP://{host}:{port}/healthz?probe=1"):
        request = f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
        answer = _exchange(host, port, request.encode())
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


def test_the_target_authority_replaces_the_host_header(server):
    """The host of an absolute-form target is the request's host, whatever Host says: an
    allowed authority is served under a foreign Host, a foreign authority is not."""
    host, port, token = server
    from tests.factories import course, dumps

    body = dumps(course("ABS-1"))
    request = (
        f"POST http://localhost:{port}/api/registry/fhir/Bundle HTTP/1.1\r\n"
        f"Host: elsewhere.example\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/fhir+json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + body
    answer = _exchange(host, port, request)
    assert answer.startswith(b"HTTP/1.1 202"), answer[:300]
    assert f"content-location: http://localhost:{port}/api/".encode() in answer.lower()

    foreign = f"GET http://elsewhere.example/healthz HTTP/1.1\r\nHost: {host}:{port}\r\n"
    answer = _exchange(host, port, (foreign + "Connection: close\r\n\r\n").encode())
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]


def test_a_page_the_front_draws_carries_the_content_security_policy(server):
    host, port, _ = server
    request = (
        f"POST /accounts/login/ HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000000\r\n\r\n"
    )
    answer = _exchange(host, port, request.encode())
    lines = answer.partition(b"\r\n\r\n")[0].decode().lower().split("\r\n")
    assert lines[0].startswith("http/1.1 413")
    [policy] = [line.split(":", 1)[1] for line in lines if line.startswith("content-security")]
    directives = {part.strip() for part in policy.split(";")}
    assert {"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"} <= directives
