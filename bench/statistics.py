"""The statistics page (own figures, benchmarks and trend) at registry scale.

:func:`statistics_page_p50` measures ``/settings/statistics/`` for a small, a mid-sized and
the largest practice of an already seeded database (``manage.py seed_registry``, or
:func:`seed_statistics` below), through Django's test client in this process: the view, its
queries and the template, without the network. Call it after ``django.setup()``.

``python -m bench.statistics [--seed]`` does both against ``DATABASE_URL`` (use a database of
your own: the seed adds a few hundred practices and a million records to it).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any

SEED_PRACTICES = 300
SEED_RECORDS = 1_000_000
LARGEST_SHARE = 0.2  # the largest practice holds a fifth of the registry
FIRST_YEAR, YEARS = 2005, 20


def statistics_page_p50(*, samples: int = 15) -> dict[str, Any]:
    """p50 (and p95) in ms of the statistics page for a small, a mid and the largest practice."""
    from django.test import Client
    from django.test.utils import setup_test_environment

    setup_test_environment()  # the test client's host, "testserver", is allowed
    _ensure_counts()
    results = {}
    for label, practice, births in _practices_by_size():
        client = Client()
        client.force_login(_member(practice))
        url = f"/settings/statistics/?practice={practice.slug}"
        assert client.get(url).status_code == 200  # warm: templates, connection
        timings = []
        for _ in range(samples):
            started = time.perf_counter()
            response = client.get(url)
            timings.append(time.perf_counter() - started)
            assert response.status_code == 200
        timings.sort()
        results[label] = {
            "practice": practice.slug,
            "births": births,
            "p50_ms": round(statistics.median(timings) * 1000, 1),
            "p95_ms": round(timings[int(0.95 * (len(timings) - 1))] * 1000, 1),
            "samples": samples,
        }
    return results


def _ensure_counts() -> None:
    """A seed that wrote records without the kept counts gets them from a recount."""
    from django.core.management import call_command

    from registry.models import BirthCount, Record

    if Record.objects.exists() and not BirthCount.objects.exists():
        started = time.perf_counter()
        call_command("recount_statistics")
        print(f"counted the seeded records in {time.perf_counter() - started:.1f} s")


def _practices_by_size() -> list[tuple[str, Any, int]]:
    from django.db.models import Sum

    from registry.models import BirthCount, Practice

    sizes = list(
        BirthCount.objects.filter(group=BirthCount.ALL)
        .values("practice")
        .annotate(births=Sum("births"))
        .filter(births__gt=0)
        .order_by("births", "practice")
    )
    if not sizes:
        raise SystemExit("No counts: seed the database first (seed_registry or --seed).")
    picks = {"small": sizes[0], "mid": sizes[len(sizes) // 2], "largest": sizes[-1]}
    practices = Practice.objects.in_bulk([row["practice"] for row in picks.values()])
    return [(label, practices[row["practice"]], row["births"]) for label, row in picks.items()]


def _member(practice: Any) -> Any:
    from django.contrib.auth.models import User

    from registry.models import Membership

    user, _ = User.objects.get_or_create(username=f"bench-statistics-{practice.pk}")
    Membership.objects.get_or_create(user=user, practice=practice)
    return user


def seed_statistics(*, practices: int = SEED_PRACTICES, records: int = SEED_RECORDS) -> None:
    """A registry of ``records`` courses of care across ``practices``, in SQL, with its counts.

    One practice holds a fifth; the rest are spread unevenly (a few large, many small) over
    twenty birth years. Each record has a child and an attendant whose role varies; a few
    are voided. The counts (by birth year and by day received) are then filled by the recount, as
    the migrations do.
    """
    from django.db import connection, transaction

    from registry.models import COUNT_FIELDS
    from registry.statistics.counts import RECOUNT_SQL, recount_sql

    largest = int(records * LARGEST_SHARE)
    weights = [1 / (rank + 1) for rank in range(practices - 1)]
    rest = records - largest
    sizes = [largest] + [max(20, int(rest * w / sum(weights))) for w in weights]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE bench_sizes (slug text, n int)")
        cursor.executemany(
            "INSERT INTO bench_sizes VALUES (%s, %s)",
            [(f"bench-{index:03d}", size) for index, size in enumerate(sizes)],
        )
        for statement in _SEED_SQL:
            cursor.execute(statement, {"first": FIRST_YEAR, "years": YEARS})
        counts = ", ".join(COUNT_FIELDS)
        cursor.execute(
            f'INSERT INTO registry_birthcount (practice_id, birth_year, "group", {counts}) '
            + RECOUNT_SQL,
            {"practice": None},
        )
        cursor.execute(  # the registry office's counts by day received
            f"INSERT INTO registry_receivedcount (practice_id, day, {counts}) "
            + recount_sql(by_day=True),
            {"practice": None},
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


_SEED_SQL = [
    """INSERT INTO registry_practice (slug, name, created_at, sandbox)
       SELECT slug, slug, now(), false FROM bench_sizes""",
    """INSERT INTO registry_provider
           (practice_id, stable_id, display_name, credentials, role, updated_at)
       SELECT p.id, 'bench-' || r.role, r.role, '', r.role, now()
       FROM registry_practice p JOIN bench_sizes s ON s.slug = p.slug
       CROSS JOIN (VALUES ('midwife'), ('doula'), ('nurse'), ('assistant'), ('other')) r(role)""",
    """INSERT INTO registry_record (id, practice_id, external_record_id, version, voided,
           suspected_duplicate, consent_granted, birth_year, created_at, updated_at)
       SELECT gen_random_uuid(), p.id, 'S-' || g, 1, g %% 97 = 0, g %% 211 = 0, g %% 7 <> 0,
              %(first)s + (g * 7919) %% %(years)s, now(), now()
       FROM registry_practice p JOIN bench_sizes s ON s.slug = p.slug,
            generate_series(1, s.n) g""",
    """INSERT INTO registry_child (record_id, birth_order, outcome, birth_year,
           birth_weight_grams, gestational_age_weeks, apgar_5)
       SELECT r.id, 1, CASE WHEN h %% 200 = 0 THEN 'fetal_death' ELSE 'live_birth' END,
              r.birth_year, 1800 + h %% 2700, 30 + h %% 13, h %% 11
       FROM (SELECT id, birth_year, abs(hashtext(id::text)) AS h
             FROM registry_record WHERE external_record_id LIKE 'S-%%') r""",
    """INSERT INTO registry_attendance (record_id, provider_id, kind, role)
       SELECT r.id, v.id, 'attended', v.role
       FROM registry_record r
       JOIN registry_provider v ON v.practice_id = r.practice_id
        AND v.role = (ARRAY['midwife', 'midwife', 'midwife', 'nurse', 'nurse', 'doula',
                            'assistant', 'other'])[1 + abs(hashtext(r.id::text || 'a')) %% 8]
       WHERE r.external_record_id LIKE 'S-%%'""",
]


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    if "--seed" in sys.argv:
        started = time.perf_counter()
        seed_statistics()
        print(f"seeded in {time.perf_counter() - started:.0f} s")
    for label, figures in statistics_page_p50().items():
        print(
            f"statistics page, {label} practice ({figures['births']:,} births): "
            f"p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms"
        )


if __name__ == "__main__":
    main()
