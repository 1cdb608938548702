"""What a sandbox holds now: shown on its reset page, before anything is deleted."""

from __future__ import annotations

from dataclasses import dataclass

from ingestion.models import Ingestion
from registry.models import Practice, Record


@dataclass(frozen=True)
class SandboxContents:
    records: int
    ingestions: int

    @property
    def nothing(self) -> bool:
        return not (self.records or self.ingestions)


def sandbox_contents(*, practice: Practice) -> SandboxContents:
    return SandboxContents(
        records=Record.objects.filter(practice=practice).count(),
        ingestions=Ingestion.objects.filter(practice=practice).count(),
    )
