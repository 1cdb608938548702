"""Reads for the status endpoint."""

from __future__ import annotations

from typing import Any

from ingestion.models import Ingestion, OutcomeChunk
from ingestion.receipts.progress import ingestion_progress


def ingestion_receipt(ingestion: Ingestion) -> dict[str, Any]:
    """The receipt of spec 2.6, with ``outcome`` as docs/decisions.md describes it.

    While queued or processing it also carries ``progress``; once its outcome has been purged,
    ``outcomePurgedAt`` (additive fields).
    """
    receipt = {
        "id": str(ingestion.id),
        "status": ingestion.status,
        "accepted": ingestion.accepted_count,
        "rejected": ingestion.rejected_count,
        "outcome": _outcome(ingestion),
        "completedAt": ingestion.finished_at.isoformat() if ingestion.finished_at else None,
    }
    if ingestion.receipt_purged_at is not None:  # past its retention (ingestion.receipts.retention)
        receipt["outcomePurgedAt"] = ingestion.receipt_purged_at.isoformat()
    progress = ingestion_progress(ingestion)
    if progress is not None:
        receipt["progress"] = progress.as_receipt_field()
    return receipt


def _outcome(ingestion: Ingestion) -> dict[str, Any] | None:
    if not ingestion.finished or ingestion.outcome_purged:
        return None
    accepted: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    for chunk in OutcomeChunk.objects.filter(ingestion=ingestion).order_by("seq", "part"):
        accepted.extend(chunk.accepted)
        rejected.extend(chunk.rejected)
    if ingestion.failure is not None:
        rejected.append({"reference": "Bundle", "operation_outcome": ingestion.failure})
    if not accepted and not rejected:
        return None
    return {"accepted": accepted, "rejected": rejected}
