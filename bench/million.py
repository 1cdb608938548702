"""``make bench BENCH=million``: what a reviewer feels with a million records on file.

The records are seeded once (``seed_registry``, through COPY) into ``<name>_million`` and
kept between runs (``BENCH_RESEED=1`` starts over; ``BENCH_MILLION_RECORDS`` sets the size).
Then, signed in through Django's test client against that database, the p50 (and p95) of:

* the review queue (flagged records, newest first) of a reviewer of the largest practice,
  and of a superuser across every practice;
* a search by chart number;
* a record page in a cluster of 2 records, and in the cluster of 100,000;
* a decision (keep, confirmed by POST) on a flagged record of a pair;
* the statistics page of the 20,000-record practice, as one of its members (its data-quality
  section included), and the same figures as JSON (``data_quality`` beside the benchmarks).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bench.harness import RESULTS
from bench.report import save_section

SAMPLES = 25
RECORDS = int(os.environ.get("BENCH_MILLION_RECORDS", "1000000"))


def _database_url() -> str:
    database = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/registry")
    parts = urlsplit(database)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_million"))


def _ensure_database(url: str) -> bool:
    """Create the database when missing (or when asked to start over); True if created."""
    parts = urlsplit(url)
    name, admin = parts.path.lstrip("/"), urlunsplit(parts._replace(path="/postgres"))
    exists = subprocess.run(
        ["psql", admin, "-Atc", f"SELECT 1 FROM pg_database WHERE datname = '{name}'"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if exists and os.environ.get("BENCH_RESEED") != "1":
        return False
    for statement in (
        f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
        f'CREATE DATABASE "{name}"',
    ):
        subprocess.run(["psql", admin, "-qc", statement], check=True, capture_output=True)
    return True


def _setup() -> None:
    url = _database_url()
    _ensure_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    # The admin's pages name hashed static files from collectstatic's manifest (production
    # shape): a fresh clone has none until they are collected, as make run collects them.
    call_command("collectstatic_if_changed", verbosity=0)
    from registry.models import Practice
    from registry.seeding import seed_registry

    if not Practice.objects.filter(slug="seed-0").exists():
        print(f"bench: seeding {RECORDS:,} records (once; kept for later runs)", flush=True)
        started = time.perf_counter()
        seeded = seed_registry(records=RECORDS, progress=lambda line: print(line, flush=True))
        print(
            f"bench: seeded {seeded.records:,} records in {time.perf_counter() - started:.0f} s",
            flush=True,
        )


def _timed(request: Callable[[], Any], samples: int = SAMPLES) -> dict[str, float]:
    request()  # warm: the first request of a kind pays for imports and template loading
    found = []
    for _ in range(samples):
        started = time.perf_counter()
        response = request()
        found.append((time.perf_counter() - started) * 1000)
        assert response.status_code in (200, 302), response.status_code
    found.sort()
    return {
        "p50_ms": round(statistics.median(found), 1),
        "p95_ms": round(found[int(len(found) * 0.95) - 1], 1),
        "samples": len(found),
    }


def _users() -> dict[str, Any]:
    from django.contrib.auth.models import User

    from registry.models import Membership, Practice

    big, stats = Practice.objects.get(slug="seed-0"), Practice.objects.get(slug="seed-1")
    admin, _ = User.objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    reviewer, _ = User.objects.get_or_create(username="bench-reviewer", defaults={"is_staff": True})
    member, _ = User.objects.get_or_create(username="bench-member")
    Membership.objects.get_or_create(user=reviewer, practice=big, role="reviewer")
    Membership.objects.get_or_create(user=member, practice=stats, role="staff")
    return {"admin": admin, "reviewer": reviewer, "member": member, "big": big, "stats": stats}


def _client(user: Any) -> Any:
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    return client


def _pairs(practice: Any, count: int) -> list[Any]:
    """Flagged records of 2-record clusters (the same birth sent twice)."""
    from django.db.models import Count

    from registry.models import MatchKey, Record

    fingerprints = (
        MatchKey.objects.filter(practice=practice)
        .values("fingerprint")
        .annotate(n=Count("id"))
        .filter(n=2)
        .values_list("fingerprint", flat=True)[: count * 40]
    )
    flagged = Record.objects.filter(
        practice=practice,
        suspected_duplicate=True,
        voided=False,
        match_keys__fingerprint__in=list(fingerprints),
    ).distinct()
    return list(flagged[:count])


def run() -> dict[str, Any]:
    from registry.models import Record

    people = _users()
    admin, reviewer = _client(people["admin"]), _client(people["reviewer"])
    member = _client(people["member"])
    big = people["big"]
    queue = "/admin/registry/record/?suspected_duplicate__exact=1&voided__exact=0"
    cluster_record = (
        Record.objects.filter(practice=big, suspected_duplicate=True)
        .order_by("external_record_id")
        .first()
    )
    assert cluster_record is not None
    pairs = _pairs(big, SAMPLES + 1)
    page = "/admin/registry/record/{}/change/"
    results: dict[str, Any] = {"records": Record.objects.count()}
    print("bench: million, review queue", flush=True)
    results["review_queue_reviewer"] = _timed(lambda: reviewer.get(queue))
    results["review_queue_superuser"] = _timed(lambda: admin.get(queue))
    results["record_list_superuser"] = _timed(lambda: admin.get("/admin/registry/record/"))
    chart = pairs[0].external_record_id
    results["search_chart_number"] = _timed(
        lambda: reviewer.get(f"/admin/registry/record/?q={chart}")
    )
    print("bench: million, record pages", flush=True)
    results["record_page_pair"] = _timed(lambda: reviewer.get(page.format(pairs[0].pk)))
    results["record_page_cluster_100k"] = _timed(
        lambda: reviewer.get(page.format(cluster_record.pk))
    )
    print("bench: million, decisions", flush=True)
    decided = iter(pairs[1:])
    results["decision_keep"] = _timed(
        lambda: reviewer.post(
            f"/admin/registry/record/{next(decided).pk}/review/keep/", {"note": "bench"}
        ),
        samples=len(pairs) - 2,
    )
    print("bench: million, statistics", flush=True)
    results["statistics_20000"] = _timed(lambda: member.get("/settings/statistics/"))
    results["statistics_json_20000"] = _timed(lambda: member.get("/settings/statistics.json"))
    results["statistics_practice_records"] = Record.objects.filter(practice=people["stats"]).count()
    print("bench: million, statistics with benchmarks by practice size", flush=True)
    from bench.statistics import statistics_page_p50

    for size, figures in statistics_page_p50().items():
        results[f"statistics_{size}_{figures['births']}_births"] = figures
    return results


def print_table(results: dict[str, Any]) -> None:
    print()
    print(f"| With {results['records']:,} records on file | p50 ms | p95 ms | samples |")
    print("| --- | ---: | ---: | ---: |")
    for label, figures in results.items():
        if isinstance(figures, dict):
            print(f"| {label} | {figures['p50_ms']} | {figures['p95_ms']} | {figures['samples']} |")


def main() -> dict[str, Any]:
    RESULTS.mkdir(parents=True, exist_ok=True)
    _setup()
    results = run()
    save_section("million", results)
    print_table(results)
    return results
