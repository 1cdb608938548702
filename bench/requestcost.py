"""``make bench BENCH=requests``: the web's CPU per request, by kind of request.

The floor under the open loop's "CPU per single" (bench.openloop): what one request costs
the web whatever the worker does. One gunicorn process as the Procfile's web runs it (the
ASGI worker, the middleware, the access log written to /dev/null), one kept connection,
requests one after the other, ``BENCH_REQUESTS_COUNT`` (110) of each; the key's requests are
spread over eight practices' keys so the 120-a-minute limit is never met. CPU is user +
system time of the web's processes from ``/proc`` over each run:

* ``GET /healthz``: gunicorn and Django with no middleware work to speak of;
* ``GET {base}/metadata``: an API answer without a key;
* ``GET {base}/ingestions/{unknown id}``: a key authenticated and counted, a 404;
* ``POST {base}/Bundle``, one course of care: a single submitted (parsed, encrypted, staged,
  its message published or not as the singles flag says);
* ``GET`` of a completed single's receipt: the poll that reads it.
"""

from __future__ import annotations

import http.client
import os
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from bench.client import SUBMIT, practice_token
from bench.harness import free_port, web, worker
from bench.report import row, section

COUNT = int(os.environ.get("BENCH_REQUESTS_COUNT", "110"))
KEYS = 8
UNKNOWN = "/api/registry/fhir/ingestions/00000000-0000-0000-0000-000000000000"
METADATA = "/api/registry/fhir/metadata"


class _Connection:
    """One kept connection, opened again when the server closes an idle one."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def send(self, method: str, path: str, headers: dict[str, str], body: bytes | None = None):
        for attempt in (1, 2):
            try:
                self.http.request(method, path, body=body, headers=headers)
                response = self.http.getresponse()
                response.read()
                return response
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.http.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def requestcost() -> dict[str, Any]:
    import orjson

    from bench.courses import course

    port = free_port()
    results: dict[str, Any] = {"requests_each": COUNT}
    with worker(1), web(port, workers="1") as web_service:
        tokens = [practice_token(f"requests-{i}")[1] for i in range(KEYS)]
        connection = _Connection(port)
        turn = iter(range(10**9))

        def keyed(extra: dict[str, str] | None = None) -> dict[str, str]:
            return {"Authorization": f"Bearer {tokens[next(turn) % KEYS]}", **(extra or {})}

        def measure(name: str, one: Callable[[], Any]) -> None:
            one()  # warm
            cpu, started = web_service.cpu_seconds(), time.perf_counter()
            for _ in range(COUNT):
                one()
            spent = web_service.cpu_seconds() - cpu
            results[name] = {
                "web_cpu_ms": round(spent * 1000 / COUNT, 2),
                "wall_ms": round((time.perf_counter() - started) * 1000 / COUNT, 2),
            }

        for _ in range(50):
            connection.send("GET", "/healthz", {})
        measure("GET /healthz", lambda: connection.send("GET", "/healthz", {}))
        measure("GET metadata (no key)", lambda: connection.send("GET", METADATA, {}))
        measure("GET unknown receipt (key, 404)", lambda: connection.send("GET", UNKNOWN, keyed()))

        numbers = iter(range(10**9))
        receipts: dict[str, str] = {}  # a key's first single's status path

        def submit() -> None:
            headers = keyed({"Content-Type": "application/fhir+json"})
            body = orjson.dumps(course(3_000_000 + next(numbers), chart_prefix="RQ-"))
            answer = connection.send("POST", SUBMIT, headers, body)
            if answer.status != 202:
                raise RuntimeError(f"POST answered {answer.status}")
            location = urlsplit(answer.getheader("Content-Location") or "").path
            receipts.setdefault(headers["Authorization"], location)

        measure("POST a single", submit)
        deadline = time.monotonic() + 120
        for authorization, path in receipts.items():
            while connection.send("GET", path, {"Authorization": authorization}).getheader(
                "Retry-After"
            ):  # not finished yet
                if time.monotonic() > deadline:
                    raise RuntimeError("the singles did not complete")
                time.sleep(0.5)
        polled = iter(list(receipts.items()) * COUNT)

        def poll() -> None:
            authorization, path = next(polled)
            connection.send("GET", path, {"Authorization": authorization})

        measure("GET a completed single's receipt", poll)
    return results


def print_requests(results: dict[str, Any]) -> None:
    print(f"\nThe web's CPU per request ({results['requests_each']} of each, one process)\n")
    print(row("Request", "web CPU ms", "wall ms"))
    print(row("---", "---:", "---:"))
    for name, figures in results.items():
        if isinstance(figures, dict):
            print(row(name, figures["web_cpu_ms"], figures["wall_ms"]))


def main() -> dict[str, Any]:
    return section("requests", requestcost, print_requests)
