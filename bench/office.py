"""``make bench BENCH=office``: the registry console with 1,000 practices and 10 million
records on file (docs/performance.md, "The registry console").

Seeded once, set-based (``INSERT ... SELECT generate_series``), into ``<name>_office`` and
kept between runs for the same size (``BENCH_RESEED=1`` starts over;
``BENCH_OFFICE_RECORDS`` sets the records, 10,000,000 by default):

* 1,000 practices (and 10 sandbox ones), each with an API key, and 20 members in the first;
* two years of day rows for each: ``SubmissionCount`` (every practice sends every day, but
  one in 50 stopped 10 days ago: silent) and ``ReceivedCount``; ``BirthCount`` per birth
  year, group ``all`` and one role;
* the records, spread evenly over the practices and the two years, one in 5,000 flagged
  as a suspected duplicate (the review backlog).

Then, signed in through Django's test client against that database, the p50 (and p95) of
the console (default sort, sorted by another column, and its CSV of every practice), a
practice's Members page and its statistics page (the scorecard's page) as one of its staff.
The seed's time and rate are printed, with the load average.
"""

from __future__ import annotations

import os
import time
from typing import Any

from bench.million import _client, _ensure_database, _timed
from bench.report import row, save_section

PRACTICES = 1000
SANDBOXES = 10
DAYS = 730
MEMBERS = 20
FLAGGED_ONE_IN = 5000
SILENT_ONE_IN = 50
RECORDS = int(os.environ.get("BENCH_OFFICE_RECORDS", "10000000"))
SLUG = "office-"


def _database_url() -> str:
    from urllib.parse import urlsplit, urlunsplit

    database = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/registry")
    parts = urlsplit(database)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_office"))


def _load() -> str:
    with open("/proc/loadavg") as loadavg:
        return " ".join(loadavg.read().split()[:3])


# Every statement is set-based: no row goes through Python.
SEED = [
    (
        "practices",
        """INSERT INTO registry_practice (slug, name, sandbox, created_at)
           SELECT %(slug)s || g, 'County Hospital ' || g, g >= %(practices)s, now()
             FROM generate_series(0, %(practices)s + %(sandboxes)s - 1) g""",
    ),
    (
        "keys",
        """INSERT INTO keys_apikey (practice_id, prefix, digest, scopes, created_at,
                                    last_used_at)
           SELECT id, 'rgk_' || lpad(id::text, 8, '0'), md5(id::text) || md5(slug), '[]',
                  now() - interval '700 days', now() - (id %% 30) * interval '1 hour'
             FROM registry_practice""",
    ),
    (
        "submission days",
        """INSERT INTO registry_submissioncount
                  (practice_id, day, ingestions, courses, accepted, rejected, last_received_at)
           SELECT p.id, d::date, 3, 20 + p.id %% 7, 19 + p.id %% 7, 1,
                  d + interval '14 hours'
             FROM registry_practice p
            CROSS JOIN generate_series((current_date - %(days)s::int + 1)::timestamp,
                                       current_date::timestamp, interval '1 day') d
            WHERE NOT (p.id %% %(silent)s = 0 AND d > current_date - 10)""",
    ),
    (
        "received days",
        """INSERT INTO registry_receivedcount
                  (practice_id, day, births, suspected_duplicates, consent_granted,
                   live_births, fetal_deaths, low_birth_weight, known_birth_weight, preterm,
                   known_gestational_age, apgar5_below_7, known_apgar5, live_births_attended,
                   live_births_consent_decided, with_warning, timeliness_known,
                   received_within_5_days, received_within_10_days)
           SELECT p.id, d::date, 20, 0, 18, 20, 0, 1, 19 - p.id %% 3, 2, 20 - p.id %% 4, 0,
                  18, 20, 17, p.id %% 3, 20, 15, 19
             FROM registry_practice p
            CROSS JOIN generate_series((current_date - %(days)s::int + 1)::timestamp,
                                       current_date::timestamp, interval '1 day') d""",
    ),
    (
        "birth counts",
        """INSERT INTO registry_birthcount
                  (practice_id, birth_year, "group", births, suspected_duplicates,
                   consent_granted, live_births, fetal_deaths, low_birth_weight,
                   known_birth_weight, preterm, known_gestational_age, apgar5_below_7,
                   known_apgar5, live_births_attended, live_births_consent_decided,
                   with_warning, timeliness_known, received_within_5_days,
                   received_within_10_days)
           SELECT p.id, y, g, 7000, 1 + p.id %% 3, 6000, 7000, 10, 400, 6900, 600, 6950,
                  50, 6900, 7000, 6000, 70, 7000, 5000, 6700
             FROM registry_practice p
            CROSS JOIN generate_series(extract(year FROM current_date)::int - 2,
                                       extract(year FROM current_date)::int) y
            CROSS JOIN (VALUES ('all'), ('midwife')) AS groups(g)""",
    ),
    (
        "records",
        """INSERT INTO registry_record
                  (id, practice_id, external_record_id, version, voided, suspected_duplicate,
                   fingerprint, consent_granted, birth_year, created_at, updated_at,
                   consent_decided, drew_warning, timeliness)
           SELECT lpad(to_hex(g), 32, '0')::uuid, first.id + g %% %(practices)s, 'C-' || g,
                  1, false, g %% %(flagged)s = 0, md5(g::text) || md5((g + 1)::text), true,
                  extract(year FROM current_date)::int - (g %% 2),
                  now() - (g %% %(days)s) * interval '1 day' - (g %% 86400) * interval '1 s',
                  now(), true, g %% 50 = 0, 'days_0_5'
             FROM generate_series(0, %(records)s - 1) g,
                  (SELECT min(id) AS id FROM registry_practice) first""",
    ),
    ("analyse", "ANALYZE"),
]


def _seed() -> dict[str, Any]:
    from django.contrib.auth.models import User
    from django.db import connection, transaction

    from registry.models import Membership, Practice

    params = {
        "slug": SLUG,
        "practices": PRACTICES,
        "sandboxes": SANDBOXES,
        "days": DAYS,
        "silent": SILENT_ONE_IN,
        "flagged": FLAGGED_ONE_IN,
        "records": RECORDS,
    }
    timings: dict[str, Any] = {"load_before": _load()}
    started = time.perf_counter()
    with transaction.atomic():
        for name, statement in SEED[:-2]:
            step = time.perf_counter()
            with connection.cursor() as cursor:
                cursor.execute(statement, params)
            timings[f"{name}_s"] = round(time.perf_counter() - step, 1)
            print(f"bench: office, seeded {name} in {timings[f'{name}_s']} s", flush=True)
        first = Practice.objects.order_by("id").first()
        assert first is not None
        for n in range(MEMBERS):
            user = User.objects.create_user(f"office-member-{n}", email=f"m{n}@example.org")
            Membership.objects.create(user=user, practice=first, role="staff")
    step = time.perf_counter()
    with connection.cursor() as cursor:  # its own transaction, so a progress line shows
        cursor.execute(SEED[-2][1], params)
    records_s = time.perf_counter() - step
    with connection.cursor() as cursor:
        cursor.execute(SEED[-1][1])
    timings |= {
        "records": RECORDS,
        "records_s": round(records_s, 1),
        "records_per_s": round(RECORDS / records_s) if records_s else None,
        "total_s": round(time.perf_counter() - started, 1),
        "load_after": _load(),
    }
    print(f"bench: office, seed {timings}", flush=True)
    return timings


def _setup() -> dict[str, Any] | None:
    url = _database_url()
    created = _ensure_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic_if_changed", verbosity=0)
    from registry.models import Practice, Record

    seeded = Practice.objects.filter(slug__startswith=SLUG).exists()
    if seeded and not created:
        on_file = Record.objects.count()  # once, by the bench, not by a page
        if on_file == RECORDS:
            return None
        raise SystemExit(
            f"bench: {url} holds {on_file:,} records, not {RECORDS:,}: BENCH_RESEED=1 starts over"
        )
    print(f"bench: office, seeding {PRACTICES:,} practices and {RECORDS:,} records", flush=True)
    return _seed()


def run() -> dict[str, Any]:
    from django.contrib.auth.models import User

    from registry.models import Practice
    from registry.silence import silent_count

    root, _ = User.objects.get_or_create(
        username="office-root", defaults={"is_staff": True, "is_superuser": True}
    )
    first = Practice.objects.order_by("id").first()
    assert first is not None
    office = _client(root)
    staff = _client(User.objects.get(username="office-member-0"))
    results: dict[str, Any] = {
        "practices": PRACTICES,
        "records": RECORDS,
        "silent": silent_count(),
        "load_before": _load(),
    }
    print("bench: office, the console", flush=True)
    results["console"] = _timed(lambda: office.get("/registry/"))
    results["console_sorted_by_warnings"] = _timed(
        lambda: office.get("/registry/?sort=warned&dir=desc&page=3")
    )
    results["console_sorted_by_oldest_flagged"] = _timed(
        lambda: office.get("/registry/?sort=oldest&dir=desc")
    )
    results["console_csv"] = _timed(lambda: office.get("/registry/console.csv"))
    print("bench: office, members and statistics", flush=True)
    practice = f"?practice={first.slug}"
    results["members"] = _timed(lambda: staff.get(f"/settings/members/{practice}"))
    results["statistics"] = _timed(lambda: staff.get(f"/settings/statistics/{practice}"))
    results["load_after"] = _load()
    return results


def print_table(results: dict[str, Any]) -> None:
    print()
    print(
        row(
            f"{results['practices']:,} practices, {results['records']:,} records",
            "p50 ms",
            "p95 ms",
            "samples",
        )
    )
    print(row("---", "---:", "---:", "---:"))
    for label, figures in results.items():
        if isinstance(figures, dict) and "p50_ms" in figures:
            print(row(label, figures["p50_ms"], figures["p95_ms"], figures["samples"]))
    print(f"load average: {results['load_before']} before, {results['load_after']} after")
    if results.get("seed"):
        print(f"seed: {results['seed']}")


def _seeded_before() -> dict[str, Any] | None:
    """The seed's figures from the run that seeded this database, when saved."""
    import json

    from bench.harness import RESULTS

    latest = RESULTS / "latest.json"
    saved = json.loads(latest.read_text()).get("office", {}) if latest.exists() else {}
    seed = saved.get("seed")
    return seed if seed and seed.get("records") == RECORDS else None


def main() -> dict[str, Any]:
    from bench.harness import RESULTS

    RESULTS.mkdir(parents=True, exist_ok=True)
    seed = _setup()
    results = run()
    results["seed"] = seed or _seeded_before()
    save_section("office", results)
    print_table(results)
    return results
