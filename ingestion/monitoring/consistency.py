"""``manage.py check_registry``: does everything derived from the records agree with them?

* the statistics' kept counts against a recount (registry.statistics.counts), and what each
  practice sent per day against its finished ingestions (registry.statistics.submissions);
* the match keys against the live records (registry.matching): a voided record has none, a
  live record with a fingerprint has at least one and no more than it has children, each
  carries its record's practice and fingerprint digest;
* each finished ingestion's outcome rows against its accepted and rejected counts (a receipt
  purged by retention, or due for purging, has no rows left to compare:
  ingestion.receipts.retention);
* no staged chunk left behind by a finished ingestion.

Each check is one set-based statement (PostgreSQL), so the whole costs a few scans, not a
query per record. A :class:`Finding` names practices, ingestion ids and numbers only.

``--fix`` rebuilds what can be: the counts from a recount, a record's keys (from its
fingerprint alone when they are missing or wrong: the birth times exist only inside the keys,
so a rebuilt record matches on its fingerprint and may be flagged more often, never less),
an ingestion's counts from its outcome rows (the receipt the sender reads), and a finished
ingestion's staged chunks are deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from ingestion.receipts.retention import purge_due_before
from registry.locks import lock_practice
from registry.matching import DIGEST_HEX_DIGITS
from registry.models import Child, MatchKey, Record
from registry.statistics.counts import counts_differences, counts_rebuild
from registry.statistics.submissions import submissions_differences, submissions_rebuild

SHOWN = 10  # ingestion ids named per finding; the rest are counted


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    what: str
    practice_id: int | None = None  # the practice whose derived rows disagree, if one


def _quoted(model: Any) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _rows(statement: str, parameters: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    tables = {
        "record": _quoted(Record),
        "matchkey": _quoted(MatchKey),
        "child": _quoted(Child),
        "ingestion": _quoted(Ingestion),
        "outcome": _quoted(OutcomeChunk),
        "staged": _quoted(StagedChunk),
        "digits": DIGEST_HEX_DIGITS,
    }
    with connection.cursor() as cursor:
        cursor.execute(statement.format(**tables), parameters or {})
        return cursor.fetchall()


# -- The kept counts ------------------------------------------------------------------------


def _counts() -> list[Finding]:
    differing: dict[int, int] = {}
    for practice_id, _, _ in counts_differences():
        differing[practice_id] = differing.get(practice_id, 0) + 1
    return [
        Finding("counts", f"practice {p}: {cells} kept count cell(s) differ from a recount", p)
        for p, cells in sorted(differing.items())
    ]


def _fix_counts(findings: list[Finding]) -> None:
    for practice_id in sorted({f.practice_id for f in findings if f.practice_id is not None}):
        counts_rebuild(practice_id=practice_id)


def _sent() -> list[Finding]:
    differing: dict[int, int] = {}
    for practice_id, _ in submissions_differences():
        differing[practice_id] = differing.get(practice_id, 0) + 1
    return [
        Finding("days sent", f"practice {p}: {days} day(s) sent differ from a recount", p)
        for p, days in sorted(differing.items())
    ]


def _fix_sent(findings: list[Finding]) -> None:
    for practice_id in sorted({f.practice_id for f in findings if f.practice_id is not None}):
        submissions_rebuild(practice_id=practice_id)


# -- The match keys -------------------------------------------------------------------------

DIGEST = "('x' || substr(r.fingerprint, 1, {digits}))::bit(60)::bigint"
HAS_FINGERPRINT = "coalesce(r.fingerprint, '') <> ''"
KEYS_OF_VOIDED = """
    SELECT r.practice_id, count(DISTINCT r.id) FROM {record} r
      JOIN {matchkey} m ON m.record_id = r.id
     WHERE r.voided GROUP BY r.practice_id ORDER BY 1
"""
KEYS_MISSING = f"""
    SELECT r.practice_id, count(*) FROM {{record}} r
     WHERE NOT r.voided AND {HAS_FINGERPRINT}
       AND NOT EXISTS (SELECT 1 FROM {{matchkey}} m WHERE m.record_id = r.id)
     GROUP BY r.practice_id ORDER BY 1
"""  # noqa: S608 (table names and constants only)
KEYS_WRONG = f"""
    SELECT r.practice_id, count(DISTINCT r.id) FROM {{record}} r
      JOIN {{matchkey}} m ON m.record_id = r.id
     WHERE NOT r.voided
       AND (m.practice_id <> r.practice_id OR NOT {HAS_FINGERPRINT}
            OR m.fingerprint <> {DIGEST})
     GROUP BY r.practice_id ORDER BY 1
"""  # noqa: S608 (table names and constants only)
KEYS_TOO_MANY = """
    SELECT r.practice_id, count(*)
      FROM (SELECT record_id, count(*) AS n FROM {matchkey}
             GROUP BY record_id HAVING count(*) > 1) k
      JOIN {record} r ON r.id = k.record_id
     WHERE NOT r.voided
       AND k.n > (SELECT count(*) FROM {child} c WHERE c.record_id = k.record_id)
     GROUP BY r.practice_id ORDER BY 1
"""
KEY_CHECKS = {
    "keys of voided records": KEYS_OF_VOIDED,
    "live records without match keys": KEYS_MISSING,
    "records whose match keys are not their practice's or fingerprint's": KEYS_WRONG,
    "records with more match keys than children": KEYS_TOO_MANY,
}


def _keys() -> list[Finding]:
    return [
        Finding("match keys", f"practice {practice_id}: {n} {what}", practice_id)
        for what, statement in KEY_CHECKS.items()
        for practice_id, n in _rows(statement)
    ]


# Each fix runs under the practice's lock (no chunk changes its records meanwhile).


def _fix_keys(findings: list[Finding]) -> None:
    for practice_id in sorted({f.practice_id for f in findings if f.practice_id is not None}):
        with transaction.atomic():
            lock_practice(practice_id)
            _rows(FIX_KEYS_DROP, {"practice": practice_id})
            _rows(FIX_KEYS_REBUILD, {"practice": practice_id})


FIX_KEYS_DROP = f"""
    DELETE FROM {{matchkey}} m USING {{record}} r
     WHERE m.record_id = r.id AND r.practice_id = %(practice)s
       AND (r.voided OR m.practice_id <> r.practice_id OR NOT {HAS_FINGERPRINT}
            OR m.fingerprint <> {DIGEST}
            OR (SELECT count(*) FROM {{matchkey}} k WHERE k.record_id = r.id)
               > greatest((SELECT count(*) FROM {{child}} c WHERE c.record_id = r.id), 1))
    RETURNING m.id
"""  # noqa: S608 (table names and constants only)
FIX_KEYS_REBUILD = f"""
    INSERT INTO {{matchkey}} (record_id, practice_id, fingerprint, time, birth_order)
    SELECT r.id, r.practice_id, {DIGEST}, NULL, NULL FROM {{record}} r
     WHERE r.practice_id = %(practice)s AND NOT r.voided AND {HAS_FINGERPRINT}
       AND NOT EXISTS (SELECT 1 FROM {{matchkey}} m WHERE m.record_id = r.id)
    RETURNING id
"""  # noqa: S608 (table names and constants only)


# -- Receipts and staged chunks -------------------------------------------------------------

FINISHED = "i.status IN ('completed', 'failed')"
RECEIPTS_DIFFERING = f"""
    SELECT i.id, i.accepted_count, i.rejected_count,
           coalesce(sum(jsonb_array_length(o.accepted)), 0),
           coalesce(sum(jsonb_array_length(o.rejected)), 0)
      FROM {{ingestion}} i LEFT JOIN {{outcome}} o ON o.ingestion_id = i.id
     WHERE {FINISHED} AND i.receipt_purged_at IS NULL
       AND coalesce(i.completed_at, i.failed_at) >= %(due_before)s
     GROUP BY i.id
    HAVING i.accepted_count <> coalesce(sum(jsonb_array_length(o.accepted)), 0)
        OR i.rejected_count <> coalesce(sum(jsonb_array_length(o.rejected)), 0)
     ORDER BY i.id
"""  # noqa: S608 (table names and constants only)
STAGED_LEFT = f"""
    SELECT i.id, count(*) FROM {{staged}} s JOIN {{ingestion}} i ON i.id = s.ingestion_id
     WHERE {FINISHED} GROUP BY i.id ORDER BY i.id
"""  # noqa: S608 (table names and constants only)


def _named(ids: list[Any]) -> str:
    shown = ", ".join(str(i) for i in ids[:SHOWN])
    return shown + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def _receipts() -> list[Finding]:
    differing = _rows(RECEIPTS_DIFFERING, {"due_before": purge_due_before(timezone.now())})
    if not differing:
        return []
    ids = [row[0] for row in differing]
    return [
        Finding(
            "receipts",
            f"{len(ids)} finished ingestion(s) whose accepted or rejected count differs from "
            f"their outcome rows: {_named(ids)}",
        )
    ]


def _fix_receipts(findings: list[Finding]) -> None:
    for identifier, _, _, accepted, rejected in _rows(
        RECEIPTS_DIFFERING, {"due_before": purge_due_before(timezone.now())}
    ):
        Ingestion.objects.filter(id=identifier).update(
            accepted_count=accepted, rejected_count=rejected
        )


def _staged() -> list[Finding]:
    left = _rows(STAGED_LEFT)
    if not left:
        return []
    ids = [row[0] for row in left]
    chunks = sum(row[1] for row in left)
    return [
        Finding(
            "staged chunks",
            f"{chunks} staged chunk(s) left by {len(ids)} finished ingestion(s): {_named(ids)}",
        )
    ]


def _fix_staged(findings: list[Finding]) -> None:
    finished = [Ingestion.Status.COMPLETED, Ingestion.Status.FAILED]
    StagedChunk.objects.filter(ingestion__status__in=finished).delete()


CHECKS: list[tuple[Callable[[], list[Finding]], Callable[[list[Finding]], None]]] = [
    (_counts, _fix_counts),
    (_keys, _fix_keys),
    (_receipts, _fix_receipts),
    (_sent, _fix_sent),  # after the receipts: the days sent are recounted from their counts
    (_staged, _fix_staged),
]


def registry_check() -> list[Finding]:
    """Every inconsistency found; none when the derived tables agree with the records."""
    return [finding for check, _ in CHECKS for finding in check()]


def registry_fix() -> list[Finding]:
    """Rebuild what disagrees; returns what was found before."""
    found = []
    for check, fix in CHECKS:
        findings = check()
        if findings:
            fix(findings)
        found += findings
    return found
