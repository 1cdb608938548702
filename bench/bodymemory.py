"""``make bench BENCH=bodymemory``: the web's memory per body.

The web process's peak resident size while it takes a 60 MB batch (three
times) and a 600 MB one (limit raised to 700 MB), no worker running.
"""

from __future__ import annotations

import http.client
from pathlib import Path
from typing import Any

from bench.client import SUBMIT, post, practice_token
from bench.harness import RESULTS, PeakMemory, Service, free_port
from bench.metering import counted_web
from bench.report import row, section

BODY_LIMIT = 700_000_000


def _write_batch(path: Path, courses: int) -> int:
    """A batch body written entry by entry, so the bench never holds it whole."""
    import orjson

    from bench.courses import course

    with path.open("wb") as out:
        out.write(b'{"resourceType":"Bundle","type":"batch","entry":[')
        for index in range(courses):
            entry = {"fullUrl": f"urn:uuid:mem-{index}", "resource": course(index)}
            out.write((b"," if index else b"") + orjson.dumps(entry))
        out.write(b"]}")
    return path.stat().st_size


def _post_file(port: int, token: str, path: Path) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/fhir+json",
        "Content-Length": str(path.stat().st_size),
    }
    with path.open("rb") as body:
        connection.request("POST", SUBMIT, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
    return response.status


def _rss_mb(service_: Service) -> float:
    import psutil

    sizes = [psutil.Process(pid).memory_info().rss for pid in service_.pids()]
    return round(max(sizes) / 2**20, 1)


def bodymemory() -> dict[str, Any]:
    port = free_port()
    _, token = practice_token("body-memory")
    bodies = {"60MB": 9_500, "600MB": 95_000}
    paths = {}
    for label, courses in bodies.items():
        print(f"bench: body memory, writing a {label} batch ({courses} courses)", flush=True)
        paths[label] = RESULTS / f"body-{label}.json"
        _write_batch(paths[label], courses)
    figures: dict[str, Any] = {}
    try:
        with counted_web(port, workers=1, REGISTRY_MAX_BODY_BYTES=str(BODY_LIMIT)) as web_service:
            warm_up_web(port, token)
            runs = [("60MB", 1), ("60MB", 2), ("60MB", 3), ("600MB", 1)]
            for label, n in runs:
                before = _rss_mb(web_service)
                with PeakMemory(web_service) as memory:
                    status = _post_file(port, token, paths[label])
                if status != 202:
                    raise RuntimeError(f"{label}: submit answered {status}")
                peak = round(memory.peak["web"]["largest_process_mb"], 1)
                size_mb = paths[label].stat().st_size / 2**20
                figures[f"{label}_{n}"] = {
                    "body_mb": round(size_mb, 1),
                    "rss_before_mb": before,
                    "peak_rss_mb": peak,
                    "peak_over_body": round((peak - before) / size_mb, 2),
                    "rss_after_mb": _rss_mb(web_service),
                }
                print(f"bench: body memory {label} #{n}: {figures[f'{label}_{n}']}", flush=True)
    finally:
        for path in paths.values():
            path.unlink(missing_ok=True)
    return figures


def warm_up_web(port: int, token: str) -> None:
    import orjson

    from bench.courses import course

    for n in range(4):
        post(port, token, orjson.dumps(course(n, chart_prefix="WARMMEM")))


def print_bodymemory(results: dict[str, Any]) -> None:
    print()
    print(row("Web process, one body", "body MB", "RSS before", "peak RSS", "growth / body"))
    print(row("---", "---:", "---:", "---:", "---:"))
    for label, f in results.items():
        cells = (f["body_mb"], f["rss_before_mb"], f["peak_rss_mb"], f["peak_over_body"])
        print(row(label, *cells))


def main() -> dict[str, Any]:
    return section("bodymemory", bodymemory, print_bodymemory)
