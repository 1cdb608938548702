"""``make bench BENCH=reliability`` (also part of ``pipeline``): the figures of
docs/reliability.md, receipts in bounded memory and latency under slow clients.

* The web process's peak memory while serving the receipt of a 1,000,000-entry batch (and
  how long a 200,000-entry receipt takes): the outcome rows are stored directly, as the
  worker would have written them.
* API latency under 64 slow connections, against the server as ``make run`` starts it (the
  Procfile's command): 56 connections send one header line a second, 8 authenticated ones
  trickle a POST body, while a well-behaved client polls ``/healthz`` and a receipt.
"""

from __future__ import annotations

import http.client
import socket
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.client import practice_token
from bench.harness import BIN, PeakMemory, Service, free_port, healthz_answers, service, web
from bench.report import row, section

ENTRIES_PER_ROW = 250


def _store_receipt(practice: Any, entries: int) -> str:
    """A completed ingestion whose stored outcome rows hold ``entries`` receipt entries."""
    from django.utils import timezone

    from ingestion.fhir.outcome import error_outcome
    from ingestion.models import Ingestion, OutcomeChunk
    from registry.bulk import insert_rows

    rows = entries // ENTRIES_PER_ROW
    ingestion = Ingestion.objects.create(
        practice=practice,
        kind=Ingestion.Kind.BATCH,
        status=Ingestion.Status.COMPLETED,
        entry_count=entries,
        chunk_count=rows,
        accepted_count=rows * (ENTRIES_PER_ROW - 1),
        rejected_count=rows,
        completed_at=timezone.now(),
    )
    refused = error_outcome("value", "The birth weight is out of range.", expression="x")

    def row(seq: int) -> list[Any]:
        first = seq * ENTRIES_PER_ROW
        accepted = [
            {
                "reference": f"Bundle.entry[{first + i}]",
                "submission_uuid": str(uuid.uuid4()),
                "external_record_id": f"R-{first + i}",
                "amended": False,
            }
            for i in range(ENTRIES_PER_ROW - 1)
        ]
        last = first + ENTRIES_PER_ROW - 1
        rejected = [
            {
                "reference": f"Bundle.entry[{last}]",
                "external_record_id": f"R-{last}",
                "operation_outcome": refused,
            }
        ]
        return [ingestion.id, seq, 0, accepted, rejected]

    fields = ["ingestion_id", "seq", "part", "accepted", "rejected"]
    for start in range(0, rows, 200):
        insert_rows(OutcomeChunk, fields, (row(s) for s in range(start, min(rows, start + 200))))
    return str(ingestion.id)


def _read_receipt(port: int, token: str, ingestion_id: str) -> tuple[int, float]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    started = time.perf_counter()
    connection.request(
        "GET",
        f"/api/registry/fhir/ingestions/{ingestion_id}",
        headers={"Authorization": f"Bearer {token}"},
    )
    response = connection.getresponse()
    size = 0
    while block := response.read(1 << 20):
        size += len(block)
    assert response.status == 200, response.status
    return size, time.perf_counter() - started


def receipts(port: int, web_service: Service) -> dict[str, Any]:
    practice, token = practice_token("receipts")
    figures: dict[str, Any] = {}
    for entries in (200_000, 1_000_000):
        print(f"bench: receipt of {entries:,} entries", flush=True)
        ingestion_id = _store_receipt(practice, entries)
        _read_receipt(port, token, ingestion_id)  # warm: the rows in PostgreSQL's cache
        with PeakMemory(web_service) as memory:
            size, seconds = _read_receipt(port, token, ingestion_id)
        figures[f"entries_{entries}"] = {
            "mb": round(size / 2**20, 1),
            "seconds": round(seconds, 2),
            "web_peak_rss_mb": round(memory.peak["web"]["largest_process_mb"], 1),
        }
    return figures


# -- slow clients ------------------------------------------------------------------------------


class SlowClient(threading.Thread):
    """One connection that never finishes its request: a header line or 16 body bytes a second."""

    def __init__(self, port: int, stop: threading.Event, token: str | None) -> None:
        super().__init__(daemon=True)
        self.port, self.stop, self.token = port, stop, token

    def run(self) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                if self.token is None:
                    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    trickle = b"X-Slow: 1\r\n"
                else:
                    sock.sendall(
                        b"POST /api/registry/fhir/Bundle HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        b"Content-Type: application/fhir+json\r\nContent-Length: 1000000\r\n"
                        b"Authorization: Bearer " + self.token.encode() + b"\r\n\r\n"
                    )
                    trickle = b'{"resourceTy'
                while not self.stop.wait(1.0):
                    sock.sendall(trickle)
        except OSError:
            return  # the server closed it: that is what a timeout is for


PROBE_TIMEOUT = 30.0


def _probe(port: int, path: str, token: str | None) -> float:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=PROBE_TIMEOUT)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    started = time.perf_counter()
    try:
        connection.request("GET", path, headers=headers)
        connection.getresponse().read()
    except OSError:
        return PROBE_TIMEOUT  # not answered in time
    finally:
        connection.close()
    return time.perf_counter() - started


def slow_clients(port: int, token: str, status_path: str, seconds: float = 20) -> dict[str, Any]:
    """Latency of a well-behaved client while 64 slow connections are open."""
    stop = threading.Event()
    slow = [SlowClient(port, stop, None) for _ in range(56)]
    slow += [SlowClient(port, stop, token) for _ in range(8)]
    for client in slow:
        client.start()
    time.sleep(2)  # let them all connect and start dribbling
    samples: dict[str, list[float]] = {"healthz": [], "receipt": []}
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            samples["healthz"].append(_probe(port, "/healthz", None))
            samples["receipt"].append(_probe(port, status_path, token))
            time.sleep(0.25)
    finally:
        stop.set()
    return {name: _summary(values) for name, values in samples.items()}


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "requests": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
        "over_1s": sum(v > 1 for v in ordered),
    }


@contextmanager
def served_as_make_run(port: int) -> Iterator[Service]:
    """The web server exactly as ``make run`` and the Procfile start it."""
    command = [str(BIN / "gunicorn"), "config.asgi:application", "--config", "config/gunicorn.py"]
    with service(command, "web-as-run", healthz_answers(port), PORT=str(port)) as running:
        yield running


def slow_client_latency() -> dict[str, Any]:
    practice, token = practice_token("slow-clients")
    status_path = f"/api/registry/fhir/ingestions/{_store_receipt(practice, 1000)}"
    port = free_port()
    with served_as_make_run(port):
        print("bench: latency under 64 slow connections (make run's server)", flush=True)
        quiet = {
            "healthz": _summary([_probe(port, "/healthz", None) for _ in range(20)]),
            "receipt": _summary([_probe(port, status_path, token) for _ in range(20)]),
        }
        return {"quiet": quiet, "slow_64": slow_clients(port, token, status_path)}


# -- the section -------------------------------------------------------------------------------


def measure() -> dict[str, Any]:
    """docs/reliability.md: receipt memory, and latency under slow clients."""
    port = free_port()
    with web(port) as web_service:
        figures = receipts(port, web_service)
    return {"receipts": figures, "slow_clients": slow_client_latency()}


def print_table(figures: dict[str, Any]) -> None:
    print()
    print(row("Receipt (streamed)", "MB", "seconds", "web process peak RSS MB"))
    print(row("---", "---:", "---:", "---:"))
    for label, receipt in figures["receipts"].items():
        print(row(label, receipt["mb"], receipt["seconds"], receipt["web_peak_rss_mb"]))
    print()
    print(row("Latency (make run's server)", "requests", "p50 ms", "max ms", "over 1 s"))
    print(row("---", "---:", "---:", "---:", "---:"))
    for when, probes in figures["slow_clients"].items():
        for path, probe in probes.items():
            cells = (probe["requests"], probe["p50_ms"], probe["max_ms"], probe["over_1s"])
            print(row(f"{when}: {path}", *cells))


def main() -> dict[str, Any]:
    """``make bench BENCH=reliability``: the figures of docs/reliability.md alone."""
    return section("reliability", measure, print_table)
