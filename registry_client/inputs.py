"""What to send: a Bundle file, a folder of them, or newline-delimited Bundles (NDJSON).

Each Bundle becomes an :class:`Item` whose Idempotency-Key is derived from its bytes, so a
re-run sends the same key for the same content and the registry never ingests it twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

NDJSON_SUFFIXES = (".ndjson", ".jsonl")
JSON_SUFFIXES = (".json",)
KEY_PREFIX = "registry-submit-"


@dataclass(frozen=True, slots=True)
class Item:
    """One Bundle to submit: where it came from, its bytes, and its receipt file's name."""

    source: str  # "births/a.json" or "backfill.ndjson line 12"
    body: bytes
    receipt_name: str

    @property
    def idempotency_key(self) -> str:
        """The same bytes always give the same key (SHA-256; 80 printable ASCII characters)."""
        return KEY_PREFIX + hashlib.sha256(self.body).hexdigest()


class InputError(Exception):
    """A path that is not a Bundle file, a folder or an NDJSON file."""


def items_from(paths: Iterable[Path]) -> list[Item]:
    found: list[Item] = []
    for path in paths:
        found.extend(_items(path))
    return found


def _items(path: Path) -> Iterator[Item]:
    if path.is_dir():
        files = sorted(
            p for p in path.iterdir() if p.is_file() and p.suffix in JSON_SUFFIXES + NDJSON_SUFFIXES
        )
        for file in files:
            yield from _items(file)
    elif path.suffix in NDJSON_SUFFIXES:
        yield from _ndjson(path)
    elif path.is_file():
        yield Item(str(path), path.read_bytes(), f"{path.name}.receipt.json")
    else:
        raise InputError(f"{path}: no such file or folder")


def _ndjson(path: Path) -> Iterator[Item]:
    with path.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            body = line.strip()
            if body:
                yield Item(
                    f"{path} line {number}", body, f"{path.name}.line-{number:06d}.receipt.json"
                )
