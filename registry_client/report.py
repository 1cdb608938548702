"""What a run's summary says about each Bundle that needs a look: which file, and why.

The counts say how many; these lines say which file was refused, failed, or had a record
rejected or warned about, with the registry's own reason, so that the sender can act
without opening the receipt files. Retractions are counted by what they did.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

Entry = Mapping[str, Any]


@dataclass
class Retractions:
    records: int = 0  # records retracted (a retraction, or an NVSS void's block)
    found_nothing: int = 0  # voids none of whose certificate numbers was on file

    def add(self, entry: Entry) -> None:
        if entry.get("voided"):
            self.records += int(entry.get("voided_count", 1))
        elif entry.get("voided_count") == 0:
            self.found_nothing += 1

    def line(self) -> str:
        return (
            f"retractions: {self.records} record(s) retracted, "
            f"{self.found_nothing} void(s) found nothing to retract"
        )


@dataclass
class Notes:
    lines: list[str] = field(default_factory=list)

    def refused(self, source: str, refusal: Mapping[str, Any]) -> None:
        reason = reason_of(refusal.get("operation_outcome"))
        self.lines.append(f"{source}: refused (HTTP {refusal.get('http_status')}): {reason}")

    def receipt(self, source: str, receipt: Mapping[str, Any]) -> None:
        outcome = receipt.get("outcome") or {}
        failed = receipt.get("status") == "failed"
        for entry in outcome.get("rejected") or []:
            verb = "failed" if failed and entry.get("reference") == "Bundle" else "rejected"
            self.lines.append(f"{source}: {naming(entry)} {verb}: {reason_of(_outcome(entry))}")
        for entry in outcome.get("accepted") or []:
            if _outcome(entry):
                reason = reason_of(_outcome(entry))
                self.lines.append(f"{source}: {naming(entry)} accepted with a warning: {reason}")

    def block(self) -> list[str]:
        """The lines under "to look at:", or none when every file went through cleanly."""
        return ["to look at:", *(f"  {line}" for line in self.lines)] if self.lines else []


def naming(entry: Entry) -> str:
    chart = entry.get("external_record_id")
    reference = entry.get("reference", "Bundle")
    return f"{reference} (chart number {chart})" if chart else str(reference)


def reason_of(outcome: Mapping[str, Any] | None) -> str:
    """Each issue's diagnostics, with its details where the registry explains more."""
    reasons = list(_reasons(outcome or {}))
    return "; ".join(reasons) if reasons else "no reason given"


def _reasons(outcome: Mapping[str, Any]) -> Iterator[str]:
    for issue in outcome.get("issue") or []:
        text = str(issue.get("diagnostics") or issue.get("code") or "").rstrip(".")
        details = (issue.get("details") or {}).get("text")
        yield f"{text}. {details}" if details else text


def _outcome(entry: Entry) -> Mapping[str, Any] | None:
    return entry.get("operation_outcome")
