"""Requests inside the web in ``/metrics`` (ingestion/monitoring/inflight.py).

An overloaded web holds POSTs that wait for their 202 while the queue's depth stays flat:
the web's own figures show them. A real gunicorn as ``make run`` starts it holds one upload
that trickles in; a scrape of the same process sees it, and its age, and stops seeing it
once it is answered.
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests import workers
from tests.services import Stack

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

TOKEN = "in-flight-metrics-token-0123456789abcdefghij"


def _figures(url: str) -> dict[str, float]:
    answer = requests.get(
        f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
    )
    assert answer.status_code == 200
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
        if sample.name.startswith("registry_web_")
    }


def _until(url: str, wanted, tries: int = 40) -> dict[str, float]:
    figures: dict[str, float] = {}
    for _ in range(tries):
        figures = _figures(url)
        if wanted(figures):
            return figures
        time.sleep(0.5)
    return figures


def test_a_request_held_by_the_web_is_counted_with_its_age_until_answered(tmp_path):
    env = workers.worker_environment(REGISTRY_METRICS_TOKEN=TOKEN)
    with Stack(env, tmp_path).web() as web:
        parts = urlsplit(web.url)
        held = socket.create_connection((parts.hostname, parts.port), timeout=30)
        held.sendall(
            b"POST /api/registry/fhir/Bundle HTTP/1.1\r\nHost: localhost\r\n"
            b"Authorization: Bearer rgk_nobody\r\nContent-Type: application/fhir+json\r\n"
            b"Content-Length: 64\r\n\r\n{"
        )
        for _ in range(3):  # the body trickles in: the request stays in flight
            time.sleep(1)
            held.sendall(b" ")
        during = _until(web.url, lambda f: f.get("registry_web_oldest_request_seconds", 0) >= 2.0)
        held.sendall(b" " * 59 + b"}")
        held.recv(4096)  # answered (401: no such key)
        held.close()
        after = _until(web.url, lambda f: f.get("registry_web_requests_in_flight", 0) <= 1)
    # The held upload and the scrape itself.
    assert during["registry_web_requests_in_flight"] >= 2
    assert during["registry_web_oldest_request_seconds"] >= 2.0
    assert after["registry_web_requests_in_flight"] == 1  # the scrape alone
    held_for = during["registry_web_oldest_request_seconds"]
    assert after["registry_web_oldest_request_seconds"] < held_for
