"""The pipeline's kept counters: one upsert per chunk, in the chunk's transaction.

A receipt entry says what happened to a record: ``accepted`` (and among those, ``flagged``
as a suspected duplicate, ``amended`` for a further version, ``retracted`` for a record
voided, one per record an NVSS void voided) or ``rejected``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from django.db import connection
from django.db.models import Sum

from ingestion.models import PipelineCount

RECORD_OUTCOMES = ("accepted", "rejected", "flagged", "amended", "retracted")
INGESTION_STATES = ("completed", "failed")


@dataclass(frozen=True, slots=True)
class Tally:
    ingestions_completed: int = 0
    ingestions_failed: int = 0
    records_accepted: int = 0
    records_rejected: int = 0
    records_flagged: int = 0
    records_amended: int = 0
    records_retracted: int = 0


COLUMNS = [f.name for f in fields(Tally)]


def tally_of(
    accepted: Sequence[Mapping[str, Any]], rejected: Sequence[object], *, completed: int = 0
) -> Tally:
    """What one chunk's receipt entries add to the counters."""
    return Tally(
        ingestions_completed=completed,
        records_accepted=len(accepted),
        records_rejected=len(rejected),
        records_flagged=sum(1 for entry in accepted if entry.get("suspected_duplicate")),
        records_amended=sum(1 for entry in accepted if entry.get("amended")),
        records_retracted=sum(_voided(entry) for entry in accepted),
    )


def _voided(entry: Mapping[str, Any]) -> int:
    if not entry.get("voided"):
        return 0
    return int(entry.get("voided_count", 1))


def tally_sum(tallies: Iterable[Tally]) -> Tally:
    totals = dict.fromkeys(COLUMNS, 0)
    for tally in tallies:
        for name in COLUMNS:
            totals[name] += getattr(tally, name)
    return Tally(**totals)


def _upsert_statement() -> str:
    table = connection.ops.quote_name(PipelineCount._meta.db_table)
    added = ", ".join(f"{name} = {table}.{name} + excluded.{name}" for name in COLUMNS)
    return (
        f"INSERT INTO {table} (practice_id, {', '.join(COLUMNS)}) "  # noqa: S608 (no value)
        f"VALUES ({', '.join(['%s'] * (len(COLUMNS) + 1))}) "
        f"ON CONFLICT (practice_id) DO UPDATE SET {added}"
    )


def pipeline_counts_add(*, practice_id: int, tally: Tally) -> None:
    """Add ``tally`` to the practice's counters: one statement, in the caller's transaction."""
    adding = pipeline_counts_statement(practice_id=practice_id, tally=tally)
    if adding is None:
        return
    with connection.cursor() as cursor:
        cursor.execute(*adding)


def pipeline_counts_statement(*, practice_id: int, tally: Tally) -> tuple[str, list[int]] | None:
    """The statement of :func:`pipeline_counts_add` and its values (None: nothing to add), for
    a caller that sends it with its own."""
    if not any(getattr(tally, name) for name in COLUMNS):
        return None
    return _upsert_statement(), [practice_id, *(getattr(tally, name) for name in COLUMNS)]


def pipeline_counts_total() -> Tally:
    """Every practice's counters summed: one row per practice, no count over records."""
    sums = PipelineCount.objects.aggregate(**{name: Sum(name) for name in COLUMNS})
    return Tally(**{name: int(sums[name] or 0) for name in COLUMNS})
