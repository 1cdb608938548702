"""Concurrent POSTs with one Idempotency-Key create exactly one ingestion (a DB constraint)."""

from __future__ import annotations

import threading
import urllib.request

import pytest

from ingestion.models import Ingestion, StagedChunk
from tests.factories import course, dumps
from tests.ingestion.conftest import mint

THREADS = 12


def post(url: str, token: str, key: str, results: list, barrier: threading.Barrier) -> None:
    request = urllib.request.Request(
        url,
        data=dumps(course("C-1")),
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/fhir+json",
            "Idempotency-Key": key,
        },
    )
    barrier.wait()
    with urllib.request.urlopen(request, timeout=30) as response:
        results.append((response.status, response.headers["Content-Location"]))


@pytest.mark.django_db(transaction=True)
def test_concurrent_posts_with_one_key_create_exactly_one_ingestion(live_server, settings):
    from registry.models import Practice

    settings.CELERY_TASK_ALWAYS_EAGER = False  # nothing consumes the queue here
    practice = Practice.objects.create(slug="st-mary")
    token = mint(practice)
    url = f"{live_server.url}/api/registry/fhir/Bundle"
    results: list = []
    barrier = threading.Barrier(THREADS)
    threads = [
        threading.Thread(target=post, args=(url, token, "same-key", results, barrier))
        for _ in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == THREADS
    assert {status for status, _ in results} == {202}
    assert len({location for _, location in results}) == 1
    assert Ingestion.objects.count() == 1
    assert StagedChunk.objects.count() == 1
