"""``make bench BENCH=bodies``: the worst bodies by shape, not by size, against each door.

Each body is under the 64 MiB size limit and the 64-level depth limit, yet made of as many
JSON values as its bytes allow: 400,000 arrays each nested 62 deep (the probe's body of
issue 31), one array of zeros, one object of empty-keyed members, a batch of empty entries,
and an NVSS message carrying a document of nested arrays. Then the costliest bodies the default
value limits let through: a batch of four million empty entries, and one of 166 entries each
holding 49,000 values of nested arrays. Each is sent through gunicorn
(one web process) to submit and to ``$validate``; for a submission the worker's time to
finish the ingestion and its peak memory are measured too. Last, ``/healthz`` is polled
while three nested bodies are sent to ``$validate`` at once. Prints figures, never fails on
time (an answer other than the expected 2xx or 4xx is printed as it is).
"""

from __future__ import annotations

import http.client
import threading
import time
from typing import Any

from bench.client import SUBMIT, practice_token, wait_completed
from bench.harness import PeakMemory, free_port, web, worker
from bench.report import row, section

VALIDATE = SUBMIT + "/$validate"
BODY_BYTES = 50_000_000  # 47.7 MiB, as in issue 31
HEALTHZ_TIMEOUT = 120


def nested_values(count: int = 400_000, depth: int = 62) -> bytes:
    one = b"[" * depth + b"]" * depth
    return b",".join([one] * count)


def bodies() -> dict[str, bytes]:
    """Each worst case by name: the first five about ``BODY_BYTES`` long."""
    zeros = b",".join([b"0"] * (BODY_BYTES // 2))
    members = b",".join([b'"":0'] * (BODY_BYTES // 5))
    empty_entries = b",".join([b"{}"] * (BODY_BYTES // 3))
    header = b'{"resource":{"resourceType":"MessageHeader","eventUri":"x"}}'
    document = b'{"resourceType":"Bundle","type":"document","x":[' + nested_values(390_000, 58)
    return {
        "nested arrays": b'{"resourceType":"Bundle","x":[' + nested_values() + b"]}",
        "array of zeros": b'{"resourceType":"Bundle","x":[' + zeros + b"]}",
        "wide object": b'{"resourceType":"Bundle","x":{' + members + b"}}",
        "empty entries": b'{"resourceType":"Bundle","type":"batch","entry":['
        + empty_entries
        + b"]}",
        "NVSS message": b'{"resourceType":"Bundle","type":"message","entry":['
        + header
        + b',{"resource":'
        + document
        + b"]}}]}",
        **under_the_limits(),
    }


def under_the_limits(body_values: int = 8_388_608, entry_values: int = 50_000) -> dict[str, bytes]:
    """The costliest bodies the default value limits let through the door (a batch: a single
    Bundle is held to the entry limit whole): as many empty entries as the body limit allows,
    and entries each holding nearly the entry limit of nested arrays."""
    delete = b'{"request":{"method":"DELETE","url":"Bundle?identifier=x|1"}'
    empty = b",".join([b"{}"] * (body_values // 2 - 20))
    per_entry = entry_values // 61 - 10
    heavy = delete + b',"x":[' + nested_values(per_entry, 60) + b"]}"
    heavy_entries = b",".join([heavy] * (body_values // entry_values - 1))
    batch = b'{"resourceType":"Bundle","type":"batch","entry":['
    return {
        "empty entries, under the limits": batch + delete + b"}," + empty + b"]}",
        "nested entries, under the limits": batch + heavy_entries + b"]}",
    }


def _send(port: int, token: str, path: str, body: bytes) -> tuple[int, str, float]:
    """One POST: its status, its Content-Location (a submission's status URL), seconds."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    started = time.perf_counter()
    connection.request(
        "POST",
        path,
        body=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"},
    )
    response = connection.getresponse()
    response.read()
    location = response.getheader("Content-Location") or ""
    return response.status, location, time.perf_counter() - started


def _one(
    port: int, token: str, path: str, body: bytes, services: tuple[Any, ...]
) -> dict[str, Any]:
    with PeakMemory(*services) as memory:
        status, location, seconds = _send(port, token, path, body)
        worker_seconds = None
        if status == 202:  # accepted: until the worker has finished with it
            started = time.perf_counter()
            wait_completed(location.rsplit("/", 1)[-1])
            worker_seconds = round(seconds + time.perf_counter() - started, 2)
    return {
        "status": status,
        "answer_seconds": round(seconds, 2),
        "worker_done_seconds": worker_seconds,
        "peak_mb": {name: round(p["largest_process_mb"]) for name, p in memory.peak.items()},
    }


def _healthz_while(port: int, token: str, body: bytes, calls: int = 3) -> dict[str, Any]:
    """/healthz polled while ``calls`` bodies go to $validate at once: the slowest answer."""
    statuses: list[int] = []

    def send() -> None:
        statuses.append(_send(port, token, VALIDATE, body)[0])

    senders = [threading.Thread(target=send) for _ in range(calls)]
    for sender in senders:
        sender.start()
    polls: list[float] = []
    while any(sender.is_alive() for sender in senders):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HEALTHZ_TIMEOUT)
        started = time.perf_counter()
        try:
            connection.request("GET", "/healthz")
            connection.getresponse().read()
        except TimeoutError:
            return {"statuses": [], "healthz_slowest_ms": f"over {HEALTHZ_TIMEOUT} s"}
        polls.append(time.perf_counter() - started)
        time.sleep(0.05)
    for sender in senders:
        sender.join()
    return {
        "statuses": sorted(statuses),
        "healthz_polls": len(polls),
        "healthz_slowest_ms": round(max(polls, default=0) * 1000),
    }


def measure() -> dict[str, Any]:
    port = free_port()
    _, token = practice_token("bench-bodies")
    cases = bodies()
    figures: dict[str, Any] = {}
    with web(port, workers="1") as web_service, worker(1, name="worker-bodies") as work:
        for label, body in cases.items():
            for endpoint, path in (("submit", SUBMIT), ("$validate", VALIDATE)):
                services = (web_service, work) if endpoint == "submit" else (web_service,)
                figures[f"{label}, {endpoint}"] = one = _one(port, token, path, body, services)
                print(f"bench: {label}, {endpoint}: {one}", flush=True)
        figures["healthz while 3 nested $validate"] = during = _healthz_while(
            port, token, cases["nested arrays"]
        )
        print(f"bench: healthz: {during}", flush=True)
    return figures


def show(results: dict[str, Any]) -> None:
    print()
    print(row("Body (47.7 MiB), door", "status", "answer s", "done s", "web MB", "worker MB"))
    print(row("---", "---:", "---:", "---:", "---:", "---:"))
    for label, f in results.items():
        if "status" not in f:
            continue
        peak = f["peak_mb"]
        cells = (f["answer_seconds"], f["worker_done_seconds"] or "")
        print(row(label, f["status"], *cells, peak.get("web", ""), peak.get("worker-bodies", "")))
    during = results.get("healthz while 3 nested $validate", {})
    print(f"\n/healthz during three nested $validate calls: {during}")


def main() -> dict[str, Any]:
    return section("bodies", measure, show)
