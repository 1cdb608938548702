"""A registry of realistic masked records, loaded quickly through COPY (``seed_registry``).

For measuring what reviewers feel with a million records on file (``make bench
BENCH=million``) and for trying the admin at scale. What it writes is what the pipeline
stores, masked as the pipeline masks it: random fingerprints, birth years, mothers' ages,
postal prefixes, one or two children with their measures, an attendant, a version row and
match keys for live records. The shape of the registry:

* a few hundred practices of uneven size, one holding about a fifth of all records;
* one practice of exactly 20,000 records (the statistics page's case);
* in the largest practice, a cluster of 100,000 records sharing one fingerprint (placeholder
  names, test patients), every one after the first flagged;
* about 1% of records are a pair with a previous record (the same birth sent twice), flagged;
  about 3% are twins sent as two documents (apart by their order, not flagged); 1% voided.

Seeded practices are named ``seed-<n>``; seeding refuses to run twice over them.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from django.db import connection, transaction
from psycopg import sql

from registry.matching import digest
from registry.models import (
    CHILD_COLUMNS,
    Attendance,
    Child,
    MatchKey,
    Practice,
    Provider,
    Record,
    RecordVersion,
    Timeliness,
)
from registry.statistics.counts import counts_rebuild

BIG_SHARE = 0.20
STATISTICS_PRACTICE_RECORDS = 20_000
CLUSTER_RECORDS = 100_000
PROVIDERS_PER_PRACTICE = 12
ROLES = ["midwife", "midwife", "nurse", "doula", "assistant", "other"]
SLUG_PREFIX = "seed-"
START = datetime(2021, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Plan:
    """How many records each seeded practice gets (the first is the largest)."""

    sizes: list[int]
    cluster: int  # records of the largest practice sharing one fingerprint
    statistics_practice: int  # index into ``sizes`` of the 20,000-record practice

    @classmethod
    def for_total(cls, records: int, practices: int, rng: random.Random) -> Plan:
        big = int(records * BIG_SHARE)
        statistics = min(STATISTICS_PRACTICE_RECORDS, max(1, records // 50))
        rest = records - big - statistics
        others = max(1, practices - 2)
        weights = [rng.paretovariate(1.5) for _ in range(others)]
        scale = rest / sum(weights)
        sizes = [max(1, int(w * scale)) for w in weights]
        sizes[0] += rest - sum(sizes)  # exact total
        cluster = min(CLUSTER_RECORDS, big // 2)
        return cls([big, statistics, *sizes], cluster, 1)


@dataclass
class Seeded:
    practices: list[Practice] = field(default_factory=list)
    records: int = 0
    flagged: int = 0


def seed_registry(
    *, records: int = 1_000_000, practices: int = 300, seed: int = 0, progress: Any = None
) -> Seeded:
    """Load ``records`` masked records over ``practices`` practices (see the module docstring)."""
    if Practice.objects.filter(slug__startswith=SLUG_PREFIX).exists():
        raise ValueError("the registry is already seeded (practices named seed-<n> exist)")
    rng = random.Random(seed)  # noqa: S311 (reproducible test data, not secrets)
    plan = Plan.for_total(records, practices, rng)
    seeded = Seeded()
    for index, size in enumerate(plan.sizes):
        practice = Practice.objects.create(
            slug=f"{SLUG_PREFIX}{index}", name=f"Seeded practice {index}"
        )
        seeded.practices.append(practice)
        cluster = plan.cluster if index == 0 else 0
        with transaction.atomic():
            _seed_practice(practice, size, cluster, rng, seeded)
        if progress is not None and (index < 3 or index % 50 == 0):
            progress(f"{practice.slug}: {size} records ({seeded.records} so far)")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    seeding_finished(practices=seeded.practices)
    return seeded


def seeding_finished(*, practices: Sequence[Practice]) -> None:
    """Derived tables built from the seeded records: the statistics' kept counts."""
    for practice in practices:
        counts_rebuild(practice_id=practice.pk)


# --- One practice ---------------------------------------------------------------------------------


RECORD_COLUMNS = [
    "id",
    "practice_id",
    "external_record_id",
    "version",
    "voided",
    "voided_at",
    "suspected_duplicate",
    "fingerprint",
    "ig_version",
    "consent_granted",
    "consent_datetime",
    "source_updated_at",
    "birth_year",
    "mother_age_years",
    "mother_postal_prefix",
    "created_at",
    "updated_at",
    "drew_warning",
    "consent_decided",
    "timeliness",
]


@dataclass
class _Rows:
    records: list[tuple[Any, ...]] = field(default_factory=list)
    children: list[tuple[Any, ...]] = field(default_factory=list)
    attendances: list[tuple[Any, ...]] = field(default_factory=list)
    versions: list[tuple[Any, ...]] = field(default_factory=list)
    keys: list[tuple[Any, ...]] = field(default_factory=list)


def _seed_practice(
    practice: Practice, size: int, cluster: int, rng: random.Random, seeded: Seeded
) -> None:
    providers = _providers(practice)
    rows = _Rows()
    cluster_fingerprint = _fingerprint(practice.pk, -1)
    previous: tuple[str, int | None] | None = None  # the last record's fingerprint and order
    twin: str | None = None  # the first twin's fingerprint, when the next is the second
    for n in range(size):
        born = START + timedelta(minutes=rng.randrange(4 * 365 * 24 * 60))
        if n < cluster:
            fingerprint, order, flagged = cluster_fingerprint, None, n > 0
        elif twin is not None:
            fingerprint, order, flagged, twin = twin, 2, False, None  # the second twin
        elif previous is not None and rng.random() < 0.01:
            fingerprint, order, flagged = previous[0], previous[1], True  # the same birth again
        elif rng.random() < 0.015:
            fingerprint, order, flagged = _fingerprint(practice.pk, n), 1, False
            twin = fingerprint  # twins sent as one document each
        else:
            fingerprint, order, flagged = _fingerprint(practice.pk, n), None, False
        voided = not flagged and rng.random() < 0.01
        record_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        _record(rows, practice, record_id, n, born, fingerprint, order, flagged, voided, rng)
        provider, role = rng.choice(providers)
        rows.attendances.append((record_id, provider, "attended", role))
        previous = (fingerprint, order)
        seeded.records += 1
        seeded.flagged += flagged
        if len(rows.records) >= 20_000:
            _flush(rows)
            rows = _Rows()
    _flush(rows)


def _record(
    rows: _Rows,
    practice: Practice,
    record_id: uuid.UUID,
    n: int,
    born: datetime,
    fingerprint: str,
    order: int | None,
    flagged: bool,
    voided: bool,
    rng: random.Random,
) -> None:
    delay = rng.randint(1, 30)
    received = born + timedelta(days=delay)
    consent = rng.random() > 0.2
    rows.records.append(
        (
            record_id,
            practice.pk,
            f"S{practice.pk:04d}-{n:08d}",
            1,
            voided,
            received if voided else None,
            flagged,
            fingerprint,
            "2.0.0",
            consent,
            received if consent else None,
            received,
            born.year,
            rng.randint(16, 45),
            f"{rng.randint(100, 999)}",
            received,
            received,
            n % 37 == 0,  # about 3% draw a plausibility warning
            consent or n % 3 == 0,  # a decision: granted, or (for some) declined
            _timeliness(delay),
        )
    )
    weeks = min(42, max(22, int(rng.gauss(39, 1.8))))
    weight = max(400, int(rng.gauss(3300, 500)))
    child = (
        record_id,
        order or 1,
        "live_birth" if rng.random() > 0.006 else "fetal_death",
        rng.choice(["female", "male"]),
        born.year,
        weight,
        weeks,
        rng.randint(0, 6),
        rng.choice([9, 8, 8, 7, 6, 4]),
        rng.choice([9, 9, 9, 8, 8, 7, 6, 4]),
        None,
    )
    rows.children.append(child)
    values = {"voided": False, "fingerprint": fingerprint, "children": [list(child[1:])]}
    rows.versions.append((record_id, 1, "created", orjson.dumps(values).decode(), received))
    if not voided:
        rows.keys.append((record_id, practice.pk, digest(fingerprint), None, order))


def _timeliness(delay: int) -> str:
    if delay <= 5:
        return Timeliness.DAYS_0_5.value
    return Timeliness.DAYS_6_10.value if delay <= 10 else Timeliness.DAYS_OVER_10.value


def _fingerprint(practice_id: int, n: int) -> str:
    return hashlib.sha256(f"seed/{practice_id}/{n}".encode()).hexdigest()


def _providers(practice: Practice) -> list[tuple[int, str]]:
    made = Provider.objects.bulk_create(
        Provider(
            practice=practice,
            stable_id=f"P-{i}",
            display_name=f"Provider {i}",
            role=ROLES[i % len(ROLES)],
        )
        for i in range(PROVIDERS_PER_PRACTICE)
    )
    return [(p.pk, p.role) for p in made]


def _flush(rows: _Rows) -> None:
    _copy(Record, RECORD_COLUMNS, rows.records)
    _copy(Child, CHILD_COLUMNS, rows.children)
    _copy(Attendance, ["record_id", "provider_id", "kind", "role"], rows.attendances)
    _copy(RecordVersion, ["record_id", "version", "change", "values", "created_at"], rows.versions)
    _copy(MatchKey, ["record_id", "practice_id", "fingerprint", "time", "birth_order"], rows.keys)


def _copy(model: Any, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(model._meta.db_table),
        sql.SQL(", ").join(sql.Identifier(_column(model, c)) for c in columns),
    )
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def _column(model: Any, name: str) -> str:
    return str(model._meta.get_field(name).column)
