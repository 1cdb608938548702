"""``make bench BENCH=pipeline``: what users feel, against the floor and against a naive baseline.

Runs the production shape on this machine: gunicorn serving the API, real Celery worker
processes, PostgreSQL and Redis. It prints figures and never passes or fails on time.

* End to end: POST of a 1,000- and a 10,000-course batch until ``completed``, with one
  worker process and with two; the same 10,000 batch with full fhir.resources validation
  switched on (the naive baseline).
* The floor, in the same run: orjson parsing the same bytes plus PostgreSQL COPY of the rows
  those courses store.
* Submit latency of a single course at 1 and 16 concurrent clients (several practices'
  keys, so the 120/minute limit is respected), and poll latency.
* Peak RSS of the worker and the web processes during the 10,000 batch.
* The per-course cost of the pure mapping core.

It uses its own database (``<name>_bench``, recreated each run) and Redis database 15, and
writes ``bench/results/latest.json``. With ``BENCH_PROFILE=1`` it also samples the worker
with py-spy during the 10,000-course run (slightly slowing that run) and writes the hottest
functions to ``bench/results/worker-profile-10000-w1.txt``; ``BENCH_PROFILE=gil`` samples
only the thread holding the GIL (CPU spent in Python, not waits).
"""

from __future__ import annotations

import gc
import os
import platform
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench import reliability
from bench.client import get, percentiles, post, practice_token, wait_completed, warm_up
from bench.harness import (
    DATABASE_URL,
    REDIS_URL,
    RESULTS,
    PeakMemory,
    free_port,
    recreate_database,
    setup_django,
    web,
    worker,
)
from bench.profiling import profiled
from bench.report import row, save_section


def end_to_end(port: int, body: bytes, count: int, label: str) -> dict[str, Any]:
    """POST a batch and wait until it is completed: courses per second, wall clock."""
    practice, token = practice_token(f"e2e-{label}")
    started = datetime.now(UTC)
    status, location, post_seconds = post(port, token, body)
    if status != 202:
        raise RuntimeError(f"submit answered {status}")
    ingestion = wait_completed(location.rsplit("/", 1)[-1])
    seconds = (ingestion.completed_at - started).total_seconds()
    if ingestion.accepted_count + ingestion.rejected_count != count:
        raise RuntimeError(f"{label}: {ingestion.accepted_count} accepted of {count}")
    return {
        "courses": count,
        "megabytes": round(len(body) / 1e6, 1),
        "seconds": round(seconds, 2),
        "courses_per_second": round(count / seconds),
        "submit_seconds": round(post_seconds, 2),
        "accepted": ingestion.accepted_count,
        "rejected": ingestion.rejected_count,
        "practice_id": practice.id,
    }


def submit_latency(port: int, clients: int, per_client: int) -> dict[str, float]:
    """Single-course submits; each client has its own practice key (under 120/minute)."""
    import orjson as _orjson

    from bench.courses import course

    tokens = [practice_token(f"latency-{clients}-{i}")[1] for i in range(clients)]

    def client(index: int) -> list[float]:
        timings = []
        for n in range(per_client):
            body = _orjson.dumps(course(index * 100_000 + n, chart_prefix=f"L{clients}-{index}"))
            status, _, elapsed = post(port, tokens[index], body)
            assert status == 202, status
            timings.append(elapsed)
        return timings

    with ThreadPoolExecutor(max_workers=clients) as pool:
        samples = [t for timings in pool.map(client, range(clients)) for t in timings]
    return percentiles(samples)


def poll_latency(port: int, requests: int) -> dict[str, float]:
    import orjson as _orjson

    from bench.courses import course

    _, token = practice_token("poll")
    _, location, _ = post(port, token, _orjson.dumps(course(1, chart_prefix="POLL")))
    ingestion_id = location.rsplit("/", 1)[-1]
    wait_completed(ingestion_id)
    path = urlsplit(location).path
    samples = [get(port, token, path) for _ in range(requests)]
    return percentiles(samples)


# -- the floor and the naive baseline ------------------------------------------------------------

FLOOR_TABLES = [
    ("registry_record", "practice_id = {practice}"),
    (
        "registry_child",
        "record_id IN (SELECT id FROM registry_record WHERE practice_id = {practice})",
    ),
    (
        "registry_attendance",
        "record_id IN (SELECT id FROM registry_record WHERE practice_id = {practice})",
    ),
    (
        "registry_recordversion",
        "record_id IN (SELECT id FROM registry_record WHERE practice_id = {practice})",
    ),
    ("registry_matchkey", "practice_id = {practice}"),
]


def floor(body: bytes, practice_id: int) -> dict[str, float]:
    """orjson over the same bytes, plus COPY of the rows those courses store."""
    import orjson
    from django.db import connection

    # The floor is the best case: no cyclic GC re-scanning millions of new containers.
    gc.disable()
    try:
        started = time.perf_counter()
        orjson.loads(body)
        parse = time.perf_counter() - started
    finally:
        gc.enable()
    copy = 0.0
    with connection.cursor() as cursor:
        raw = cursor.cursor
        for table, condition in FLOOR_TABLES:
            exported = bytearray()
            selection = condition.format(practice=practice_id)
            query = f"COPY (SELECT * FROM {table} WHERE {selection}) TO STDOUT"
            with raw.copy(query) as out:
                for block in out:
                    exported += block
            raw.execute(f"CREATE TEMP TABLE floor_{table} (LIKE {table} INCLUDING ALL)")
            started = time.perf_counter()
            with raw.copy(f"COPY floor_{table} FROM STDIN") as into:
                into.write(bytes(exported))
            copy += time.perf_counter() - started
            raw.execute(f"DROP TABLE floor_{table}")
    return {
        "orjson_parse_seconds": round(parse, 3),
        "copy_seconds": round(copy, 3),
        "seconds": round(parse + copy, 3),
    }


def mapping_costs(sample: int = 300) -> dict[str, Any]:
    """µs per course: our pure mapping, and full fhir.resources validation of the same."""
    from fhir.resources.R4B.bundle import Bundle

    from bench import mapping
    from bench.courses import course
    from ingestion.fhir import map_single, practice_fingerprint_key

    key = practice_fingerprint_key(b"bench", 1)
    courses = [course(i) for i in range(sample)]
    started = time.perf_counter()
    for c in courses:
        map_single(c, fingerprint_key=key)
    ours = (time.perf_counter() - started) / sample
    started = time.perf_counter()
    for c in courses[:100]:
        Bundle.model_validate(c)
    validation = (time.perf_counter() - started) / 100
    return {
        "bench_course_us": round(ours * 1e6, 1),
        "fhir_resources_validation_us": round(validation * 1e6, 1),
        "core": mapping.run(),
    }


# -- the run ---------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import psutil
    from django.db import connection

    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        postgres = cursor.fetchone()[0]
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "postgresql": postgres,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def main() -> dict[str, Any]:
    """``make bench BENCH=pipeline``: every figure above, reliability's included."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    print(
        f"bench: database {urlsplit(DATABASE_URL).path.lstrip('/')}, redis {REDIS_URL}", flush=True
    )
    recreate_database()
    setup_django()
    from bench.courses import batch_bytes

    results: dict[str, Any] = {"machine": machine()}
    print("bench: building batches", flush=True)
    batches = {n: batch_bytes(n, chart_prefix=f"E{n}") for n in (1_000, 10_000)}
    port = free_port()
    end_to_end_results: dict[str, Any] = {}
    with web(port) as web_service:
        for processes in (1, 2):
            with worker(processes) as worker_service:
                warm_up(port)
                for count, body in batches.items():
                    label = f"{count}-w{processes}"
                    print(
                        f"bench: end to end, {count} courses, {processes} worker process(es)",
                        flush=True,
                    )
                    with (
                        PeakMemory(worker_service, web_service) as memory,
                        profiled(worker_service, f"worker-profile-{label}", label == "10000-w1"),
                    ):
                        end_to_end_results[label] = end_to_end(port, body, count, label)
                    if count == 10_000:
                        end_to_end_results[label]["peak_rss_mb"] = memory.peak
                if processes == 1:
                    print("bench: submit and poll latency", flush=True)
                    results["submit_latency"] = {
                        "clients_1": submit_latency(port, clients=1, per_client=100),
                        "clients_16": submit_latency(port, clients=16, per_client=60),
                    }
                    results["poll_latency"] = poll_latency(port, requests=100)
        print("bench: naive baseline (fhir.resources validation on), 10,000 courses", flush=True)
        with worker(1, REGISTRY_FHIR_VALIDATION="true"):
            warm_up(port)
            end_to_end_results["10000-w1-validating"] = end_to_end(
                port, batches[10_000], 10_000, "10000-w1-validating"
            )
    results["end_to_end"] = end_to_end_results
    print("bench: floor (orjson + COPY of the stored rows)", flush=True)
    results["floor"] = floor(batches[10_000], end_to_end_results["10000-w1"]["practice_id"])
    print("bench: mapping cost", flush=True)
    results["mapping"] = mapping_costs()
    ours = end_to_end_results["10000-w1"]["seconds"]
    print("bench: reliability (receipt memory, slow clients)", flush=True)
    results["reliability"] = reliability.measure()
    results["ratios"] = {
        "end_to_end_over_floor": round(ours / results["floor"]["seconds"], 2),
        "speedup_over_naive": round(end_to_end_results["10000-w1-validating"]["seconds"] / ours, 2),
    }
    for name, figures in results.items():
        save_section(name, figures)
    print_table(results)
    return results


def print_table(results: dict[str, Any]) -> None:
    if "reliability" in results:
        reliability.print_table(results["reliability"])
    m, e2e, f, r = results["machine"], results["end_to_end"], results["floor"], results["ratios"]
    print()
    print(
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB, Python {m['python']}, "
        f"PostgreSQL {m['postgresql']}, {m['date']}"
    )
    print()
    print(row("End to end (POST to completed)", "courses/s", "seconds", "submit s"))
    print(row("---", "---:", "---:", "---:"))
    for label, figures in e2e.items():
        print(
            row(
                label,
                figures["courses_per_second"],
                figures["seconds"],
                figures["submit_seconds"],
            )
        )
    print()
    print(
        f"Floor for 10,000 courses: {f['seconds']} s (orjson {f['orjson_parse_seconds']} s + "
        f"COPY {f['copy_seconds']} s); end to end is {r['end_to_end_over_floor']}x the floor."
    )
    print(
        f"Naive baseline (fhir.resources validation on): we are {r['speedup_over_naive']}x faster."
    )
    for label, figures in e2e.items():
        if "peak_rss_mb" not in figures:
            continue
        peak = figures["peak_rss_mb"]
        worker_peak = peak[f"worker{label[-1]}"]
        print(
            f"Peak RSS during {label}: worker {worker_peak['largest_process_mb']:.0f} MB "
            f"(all worker processes {worker_peak['all_processes_mb']:.0f} MB), "
            f"web {peak['web']['largest_process_mb']:.0f} MB "
            f"(all web processes {peak['web']['all_processes_mb']:.0f} MB)"
        )
    print()
    print(row("Latency", "p50 ms", "p95 ms", "p99 ms", "samples"))
    print(row("---", "---:", "---:", "---:", "---:"))
    for label, figures in [
        ("submit, 1 client", results["submit_latency"]["clients_1"]),
        ("submit, 16 clients", results["submit_latency"]["clients_16"]),
        ("poll", results["poll_latency"]),
    ]:
        cells = (figures[k] for k in ("p50_ms", "p95_ms", "p99_ms", "samples"))
        print(row(label, *cells))
    mapping = results["mapping"]
    core = mapping["core"]["realistic_course"]
    print()
    print(
        f"Mapping (pure core): {core['microseconds']} µs per {core['resources']}-resource course, "
        f"{mapping['bench_course_us']} µs per 6 KB bench course; full fhir.resources validation "
        f"of the same: {mapping['fhir_resources_validation_us']} µs."
    )
    print(f"Results: {RESULTS / 'latest.json'}")
