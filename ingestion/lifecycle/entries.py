"""The receipt entries a chunk answers with: one per course of care, retraction or void."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict
from uuid import UUID

from ingestion.fhir import Result, Void
from ingestion.fhir.outcome import error_outcome
from ingestion.lifecycle.rows import Row


class VoidedRecord(TypedDict):
    external_record_id: str
    submission_uuid: str


class AcceptedEntry(TypedDict):
    """A course stored (created, amended, revived), a record retracted, or an NVSS void."""

    reference: str
    external_record_id: str
    submission_uuid: NotRequired[str]  # absent only for a void that found nothing
    amended: NotRequired[bool]
    version: NotRequired[int]  # after an amendment
    suspected_duplicate: NotRequired[bool]
    voided: NotRequired[bool]
    voided_count: NotRequired[int]  # an NVSS void: how many of its block
    voided_records: NotRequired[list[VoidedRecord]]
    operation_outcome: NotRequired[dict[str, Any]]  # warnings only


class RejectedEntry(TypedDict):
    reference: str
    external_record_id: NotRequired[str]
    operation_outcome: dict[str, Any]


@dataclass
class ChunkOutcome:
    """The receipt entries of a chunk, in entry order."""

    accepted: list[AcceptedEntry] = field(default_factory=list)
    rejected: list[RejectedEntry] = field(default_factory=list)

    def extend(self, other: ChunkOutcome) -> None:
        self.accepted.extend(other.accepted)
        self.rejected.extend(other.rejected)


@dataclass(frozen=True, slots=True)
class Part:
    """Results of one ingestion, applied after the parts before it in the same chunk."""

    ingestion_id: UUID | None
    results: Sequence[Result]


def void_entry(void: Void, rows: Sequence[Row]) -> AcceptedEntry:
    """The receipt entry of an NVSS void: how many records of its block it voided, and which.

    When none of the block is on file the void is still accepted (NVSS voids unused
    certificate numbers too), and a warning says that nothing was voided.
    """
    entry: AcceptedEntry = {
        "reference": void.reference,
        "external_record_id": rows[0].external_record_id if rows else void.external_record_id,
    }
    if rows:
        entry["submission_uuid"] = str(rows[0].id)
        entry["voided"] = True
    entry["voided_count"] = len(rows)
    entry["voided_records"] = [
        {"external_record_id": row.external_record_id, "submission_uuid": str(row.id)}
        for row in rows
    ]
    if not rows:
        entry["operation_outcome"] = error_outcome(
            "not-found",
            f"None of the {void.block_count} certificate number(s) of this void is on file "
            "for this practice; nothing was voided.",
            expression=void.reference,
            severity="warning",
        )
    return entry


def rejection_entry(
    reference: str, external_record_id: str | None, outcome: dict[str, Any]
) -> RejectedEntry:
    if not external_record_id:
        return {"reference": reference, "operation_outcome": outcome}
    # The keys in the receipt's order: the reference, the chart, the outcome.
    return {
        "reference": reference,
        "external_record_id": external_record_id,
        "operation_outcome": outcome,
    }
