"""Receipt files: one JSON file per Bundle, written as soon as there is something to keep.

A file is written right after the 202 (with the status URL) and again when the ingestion
finishes, so an interrupted run resumes by polling, and a finished one is not sent again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from registry_client.api import FINAL_STATUSES
from registry_client.inputs import Item


@dataclass
class Record:
    """What the client knows about one Bundle, as kept in its receipt file."""

    source: str
    idempotency_key: str
    ingestion_id: str | None = None
    status_url: str | None = None
    receipt: dict[str, Any] | None = None
    refused: dict[str, Any] | None = None  # {"http_status": ..., "operation_outcome": ...}
    # When this run may first poll it (monotonic; its 202's Retry-After); not kept in the file.
    first_poll_at: float | None = None

    @property
    def finished(self) -> bool:
        if self.refused is not None:
            return True
        return self.receipt is not None and self.receipt.get("status") in FINAL_STATUSES

    def as_json(self) -> dict[str, Any]:
        found = {
            "source": self.source,
            "idempotency_key": self.idempotency_key,
            "ingestion_id": self.ingestion_id,
            "status_url": self.status_url,
            "receipt": self.receipt,
        }
        if self.refused is not None:
            found["refused"] = self.refused
        return found


def receipt_path(folder: Path, item: Item) -> Path:
    return folder / item.receipt_name


def load(path: Path, item: Item) -> Record | None:
    """The record kept for this item, if its file is there and is for the same content."""
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("idempotency_key") != item.idempotency_key:
        return None  # the file changed since: send it again (under its new key)
    return Record(
        source=item.source,
        idempotency_key=item.idempotency_key,
        ingestion_id=kept.get("ingestion_id"),
        status_url=kept.get("status_url"),
        receipt=kept.get("receipt"),
        refused=kept.get("refused"),
    )


def save(path: Path, record: Record) -> None:
    """Write atomically: a run killed mid-write leaves the previous file, never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(record.as_json(), indent=2) + "\n")
    os.replace(partial, path)
