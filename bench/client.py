"""The API from a client's side: a practice's key, a POST, a GET, waiting for ``completed``."""

from __future__ import annotations

import http.client
import statistics
import time
from typing import Any

SUBMIT = "/api/registry/fhir/Bundle"


def practice_token(slug: str) -> tuple[Any, str]:
    """A new practice and a key of every scope for it."""
    from keys.models import SCOPES, KeyEvent
    from keys.services import key_mint
    from registry.models import Practice

    practice = Practice.objects.create(slug=slug)
    return practice, key_mint(practice=practice, scopes=list(SCOPES), via=KeyEvent.Via.COMMAND)[1]


def post(
    port: int, token: str, body: bytes, connection: http.client.HTTPConnection | None = None
) -> tuple[int, str, float]:
    """One submission: on ``connection`` if given (kept for the next), else a new one."""
    connection = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    started = time.perf_counter()
    connection.request(
        "POST",
        SUBMIT,
        body=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"},
    )
    response = connection.getresponse()
    response.read()
    elapsed = time.perf_counter() - started
    return response.status, response.getheader("Content-Location") or "", elapsed


def get(port: int, token: str, path: str) -> float:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    started = time.perf_counter()
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    response.read()
    assert response.status == 200, response.status
    return time.perf_counter() - started


def wait_completed(ingestion_id: str, timeout: float = 900) -> Any:
    from ingestion.models import Ingestion

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ingestion = Ingestion.objects.get(id=ingestion_id)
        if ingestion.finished:
            return ingestion
        time.sleep(0.01)
    raise RuntimeError(f"ingestion {ingestion_id} did not finish in {timeout}s")


def warm_up(port: int) -> None:
    """A few small submissions first, so no figure includes a cold process or connection."""
    import orjson

    from bench.courses import course

    _, token = practice_token(f"warm-up-{time.monotonic_ns()}")
    for n in range(8):
        status, location, _ = post(port, token, orjson.dumps(course(n, chart_prefix="WARM")))
        assert status == 202, status
    wait_completed(location.rsplit("/", 1)[-1])


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    cuts = statistics.quantiles(ordered, n=100, method="inclusive")
    return {
        "p50_ms": round(cuts[49] * 1000, 1),
        "p95_ms": round(cuts[94] * 1000, 1),
        "p99_ms": round(cuts[98] * 1000, 1),
        "samples": len(ordered),
    }
