"""How far an unfinished ingestion has come, from what is already stored.

Each staged chunk is deleted in the transaction that applies it, so the entries still to
process are the ``entry_count`` of the chunks still staged: one indexed aggregate over at
most a few hundred small rows, no payload read. The figure is committed progress, so it
never runs ahead of the records it describes.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Sum

from ingestion.models import Ingestion, StagedChunk


@dataclass(frozen=True, slots=True)
class Progress:
    processed: int
    total: int

    def header(self) -> str:
        """The ``X-Progress`` value, e.g. ``1200 of 5000 entries``, or ``0 of 1 entry`` for a
        single-course Bundle (one record, however many resources it holds)."""
        return f"{self.processed} of {self.total} {'entry' if self.total == 1 else 'entries'}"

    def as_receipt_field(self) -> dict[str, int | str]:
        return {"processed": self.processed, "total": self.total, "unit": "entries"}


def ingestion_progress(ingestion: Ingestion) -> Progress | None:
    """None once the ingestion is completed or failed."""
    if ingestion.finished:
        return None
    left = StagedChunk.objects.filter(ingestion=ingestion).aggregate(n=Sum("entry_count"))["n"]
    total = ingestion.entry_count
    return Progress(processed=max(0, total - (left or 0)), total=total)
