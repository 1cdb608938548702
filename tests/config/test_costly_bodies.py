"""Three of the costliest bodies at once leave the real server answering (issue 31, item 2).

Issue 31's body (47.7 MiB: 400,000 arrays nested 62 deep, under the size and depth limits)
took half a minute and 2.7 GB to decode, and while a web process decoded three of them it
answered nothing else. Its values are now counted on the bytes, off the event loop and in
bounded pieces, and it is refused; ``/healthz`` answers meanwhile.
"""

from __future__ import annotations

import http.client
import threading
from urllib.parse import urlsplit

import pytest

from tests import workers
from tests.ingestion.conftest import mint
from tests.services import Stack

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

VALIDATE = "/api/registry/fhir/Bundle/$validate"
CALLS = 3


def issue_31_body() -> bytes:
    one = b"[" * 62 + b"]" * 62
    return b'{"resourceType":"Bundle","x":[' + b",".join([one] * 400_000) + b"]}"


class Caller(threading.Thread):
    """POSTs the body to ``$validate`` and keeps the answer; alive until it has it."""

    def __init__(self, host: str, port: int, token: str, body: bytes) -> None:
        super().__init__(daemon=True)
        self.host, self.port, self.token, self.body = host, port, token, body
        self.status = 0
        self.answer = b""

    def run(self) -> None:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/fhir+json"}
        connection.request("POST", VALIDATE, body=self.body, headers=headers)
        response = connection.getresponse()
        self.answer = response.read()
        self.status = response.status
        connection.close()


def _healthz(host: str, port: int) -> int:
    connection = http.client.HTTPConnection(host, port, timeout=120)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status
    finally:
        connection.close()


def test_healthz_answers_while_three_costly_bodies_are_decoded_and_each_is_413(tmp_path):
    from registry.models import Practice

    token = mint(Practice.objects.create(slug="st-mary"))
    body = issue_31_body()
    with Stack(workers.worker_environment(), tmp_path).web() as web:
        parts = urlsplit(web.url)
        host, port = str(parts.hostname), int(parts.port or 80)
        callers = [Caller(host, port, token, body) for _ in range(CALLS)]
        for caller in callers:
            caller.start()
        # From the first byte sent to the last answer: the bodies are received, then counted
        # and refused, in a few hundred milliseconds now, so polls wait for neither.
        answered_meanwhile = []
        while any(caller.is_alive() for caller in callers):
            status = _healthz(host, port)
            if any(caller.is_alive() for caller in callers):  # still decoding one at least
                answered_meanwhile.append(status)
        for caller in callers:
            caller.join()
    assert 200 in answered_meanwhile
    assert set(answered_meanwhile) == {200}
    for caller in callers:
        assert caller.status == 413, caller.answer[:300]
        assert b'"too-costly"' in caller.answer and b"OperationOutcome" in caller.answer
        assert b"JSON values" in caller.answer and b"the limit per body" in caller.answer
