"""``registry-submit --validate``: each Bundle checked with ``Bundle/$validate``, nothing stored.

Every Bundle's answer (the OperationOutcome, or the refusal) is kept beside where its receipt
would go, as ``<name>.validation.json``; the summary counts what submitting would do. The
submit receipts are left alone, so a validation run never makes a later submit skip a file.
Each Bundle is checked against the records on file when it is sent, not against the Bundles
before it in the run.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from registry_client.api import RegistryApi, Validated
from registry_client.inputs import Item

# What a preview issue's diagnostics begin with, and the summary's word for it: the first that
# matches (a void finding nothing begins "would retract nothing", and retracts nothing).
PREVIEWS = {
    "would retract nothing": "retracting nothing",
    "would create": "created",
    "would amend": "amended",
    "would be flagged as a suspected duplicate": "flagged",
    "would be rejected": "rejected",
    "would retract": "retracted",
}
SUMMARY_WORDS = ("created", "amended", "flagged", "rejected", "retracted", "retracting nothing")


@dataclass
class ValidationSummary:
    bundles: int = 0
    refused: int = 0
    would: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SUMMARY_WORDS, 0))
    errors: int = 0
    warnings: int = 0

    def add(self, outcome: dict[str, Any]) -> None:
        for issue in outcome.get("issue", []):
            severity, text = issue.get("severity"), str(issue.get("diagnostics", ""))
            if severity == "information":
                word = next((w for start, w in PREVIEWS.items() if text.startswith(start)), None)
                if word is not None:
                    self.would[word] += 1
            elif severity in ("error", "fatal"):
                self.errors += 1
            elif severity == "warning":
                self.warnings += 1

    @property
    def clean(self) -> bool:
        return not (self.refused or self.would["rejected"] or self.errors)

    def lines(self, folder: Path) -> list[str]:
        would = ", ".join(f"{n} {word}" for word, n in self.would.items())
        return [
            f"{self.bundles} Bundle(s) validated, {self.refused} refused; nothing was stored",
            f"courses of care, if submitted now: {would}",
            f"issues: {self.errors} error(s), {self.warnings} warning(s)",
            f"validation outcomes: {folder}",
        ]


def validation_path(folder: Path, item: Item) -> Path:
    return folder / (item.receipt_name.removesuffix(".receipt.json") + ".validation.json")


def validate_all(
    items: list[Item], api: RegistryApi, folder: Path, *, progress: bool
) -> ValidationSummary:
    summary = ValidationSummary(bundles=len(items))
    bar = tqdm(total=len(items), unit="bundle", disable=None if progress else True, file=sys.stderr)
    try:
        for item in items:
            answer = api.validate(item.body)
            kept: dict[str, Any] = {"source": item.source}
            if isinstance(answer, Validated):
                summary.add(answer.operation_outcome)
                kept["operation_outcome"] = answer.operation_outcome
            else:
                summary.refused += 1
                kept["refused"] = {
                    "http_status": answer.http_status,
                    "operation_outcome": answer.operation_outcome,
                }
            _save(validation_path(folder, item), kept)
            bar.update(1)
    finally:
        bar.close()
    return summary


def _save(path: Path, kept: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(kept, indent=2) + "\n")
    os.replace(partial, path)
