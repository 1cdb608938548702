"""``make bench BENCH=flood``: a same-fingerprint flood against as many unique courses.

Placeholder names and test patients make thousands of courses share one mother's name and
one birth date. Flagging must not grow with that: a batch of N courses of one birth (each
under its own chart number, so each after the first is a suspected duplicate) is timed and
weighed against a batch of N unique courses, both through the real pipeline (submit, then
``ingestion_process`` in this process). Time is the best of a few repeats (the machine is
shared); storage is what the registry's tables grew by. Both are printed as ratios.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import orjson

from bench.report import section

# BENCH_FLOOD_SIZES=3 BENCH_FLOOD_REPEATS=1: the section in seconds (tests/test_bench.py).
SIZES = tuple(int(n) for n in os.environ.get("BENCH_FLOOD_SIZES", "400,2000,5000").split(","))
REPEATS = int(os.environ.get("BENCH_FLOOD_REPEATS", "3"))


def flood_bytes(count: int, *, chart_prefix: str) -> bytes:
    """``count`` courses of one birth (same mother, date and time), each its own chart."""
    from bench.courses import course

    entries = [
        {
            "fullUrl": f"urn:uuid:flood-{i}",
            "resource": course(i, chart_prefix=chart_prefix, duplicate_of=0),
        }
        for i in range(count)
    ]
    return orjson.dumps({"resourceType": "Bundle", "type": "batch", "entry": entries})


def registry_bytes() -> int:
    """What the registry's tables (with their indexes and TOAST) take on disk now."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname LIKE 'registry\\_%%'"
        )
        return int(cursor.fetchone()[0])


def ingest(slug: str, body: bytes) -> dict[str, Any]:
    """Submit ``body`` for a new practice and process it here: seconds, bytes, flags."""
    from django.conf import settings

    from ingestion.intake.services import ingestion_submit
    from ingestion.intake.submission import parse_submission
    from ingestion.models import Ingestion
    from ingestion.pipeline.process import ingestion_process
    from registry.models import Practice, Record

    practice = Practice.objects.create(slug=slug)
    submission = parse_submission(
        body,
        chunk_entries=settings.REGISTRY_CHUNK_ENTRIES,
        chunk_bytes=settings.REGISTRY_CHUNK_BYTES,
    )
    ingestion, _ = ingestion_submit(practice=practice, submission=submission, idempotency_key=None)
    before = registry_bytes()
    started = time.perf_counter()
    ingestion_process(ingestion.id)
    seconds = time.perf_counter() - started
    ingestion.refresh_from_db()
    assert ingestion.status == Ingestion.Status.COMPLETED, ingestion.status
    flagged = Record.objects.filter(practice=practice, suspected_duplicate=True).count()
    return {"seconds": seconds, "bytes": registry_bytes() - before, "flagged": flagged}


def run(sizes: tuple[int, ...] = SIZES, repeats: int = REPEATS) -> dict[str, Any]:
    from bench.courses import batch_bytes

    results: dict[str, Any] = {}
    for count in sizes:
        bodies = {
            "unique": batch_bytes(count, chart_prefix=f"U{count}", duplicate_share=count + 1),
            "flood": flood_bytes(count, chart_prefix=f"F{count}"),
        }
        runs: dict[str, list[dict[str, Any]]] = {"unique": [], "flood": []}
        for attempt in range(repeats):
            for kind, body in bodies.items():
                print(f"bench: flood {count}, {kind}, run {attempt + 1}", flush=True)
                runs[kind].append(ingest(f"{kind}-{count}-{attempt}", body))
        best = {kind: min(r["seconds"] for r in found) for kind, found in runs.items()}
        size = {kind: min(r["bytes"] for r in found) for kind, found in runs.items()}
        results[str(count)] = {
            "unique_seconds": round(best["unique"], 2),
            "flood_seconds": round(best["flood"], 2),
            "time_ratio": round(best["flood"] / best["unique"], 2),
            "unique_mb": round(size["unique"] / 2**20, 2),
            "flood_mb": round(size["flood"] / 2**20, 2),
            # A tiny run can fit in pages the tables already had: no growth.
            "storage_ratio": round(size["flood"] / max(size["unique"], 1), 2),
            "flood_flagged": runs["flood"][0]["flagged"],
        }
    return results


def print_table(results: dict[str, Any]) -> None:
    print()
    print(
        "| Flood of N (one birth) vs N unique | unique s | flood s | time | unique MB "
        "| flood MB | storage | flagged |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for count, f in results.items():
        print(
            f"| {count} | {f['unique_seconds']} | {f['flood_seconds']} | {f['time_ratio']}x "
            f"| {f['unique_mb']} | {f['flood_mb']} | {f['storage_ratio']}x | {f['flood_flagged']} |"
        )


def main() -> dict[str, Any]:
    """The flood section alone, on a freshly created bench database."""

    def show(results: dict[str, Any]) -> None:
        print(json.dumps(results, indent=2))
        print_table(results)

    return section("flood", run, show)
