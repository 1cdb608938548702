"""One hand-off per request (config/front.py): what a response holds is given back.

A made response (not streamed) is closed in the same trip to the request's thread as its
view, so ``request_finished`` gives the database connection back to the process's pool
before a byte is sent; a streamed receipt is sent as Django sends it and closed after, or
when its client leaves half-way. A real gunicorn as ``make run`` starts it, with a pool of
two connections: a response that kept its connection would leave the next requests waiting
for the pool's timeout, and answering 503.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import orjson
import pytest
import requests

from ingestion.receipts.selectors import ingestion_receipt
from tests import workers
from tests.factories import course
from tests.ingestion.conftest import mint
from tests.ingestion.receipts.test_receipt_stream import finished
from tests.services import Stack

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SUBMIT = "/api/registry/fhir/Bundle"


def _left_half_way(url: str, path: str, token: str) -> bytes:
    """GET ``path`` and go away after the first few kilobytes of the answer."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
        )
        sock.sendall(f"{request}\r\n".encode())
        return sock.recv(8192)


def test_made_and_streamed_responses_give_their_connection_back(tmp_path):
    from registry.models import Practice

    practice = Practice.objects.create(slug="st-mary")
    token = mint(practice)
    large = finished(practice, chunks=120, per_chunk=250)  # a receipt of many pieces
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"}
    env = workers.worker_environment(REGISTRY_WEB_DB_POOL_SIZE="2")
    with Stack(env, tmp_path).web() as web, requests.Session() as http:

        def submitted(n: int) -> int:
            body = orjson.dumps(course(f"H-{n}"))
            return http.post(
                f"{web.url}{SUBMIT}", data=body, headers=headers, timeout=30
            ).status_code

        made = [submitted(n) for n in range(8)]
        receipt_path = f"/api/registry/fhir/ingestions/{large.id}"
        whole = http.get(f"{web.url}{receipt_path}", headers=headers, timeout=60)
        starts = [_left_half_way(web.url, receipt_path, token) for _ in range(4)]
        after = [submitted(n) for n in range(8, 14)]
        status = http.get(f"{web.url}{receipt_path}", headers=headers, timeout=60).status_code
    assert (made, after) == ([202] * 8, [202] * 6)
    assert whole.status_code == 200
    assert orjson.loads(whole.content) == ingestion_receipt(large)
    assert all(start.startswith(b"HTTP/1.1 200") for start in starts)
    assert status == 200
